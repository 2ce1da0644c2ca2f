/**
 * Shared pieces of the WebSocket/log integration suites: an in-process HTTP server that routes
 * upgrades exactly like lib/server/start.ts does (findUpgradeRoute over wsRoutes), over a real database; a
 * driver that moves jobs, tasks and attempts through the real guarded store the way the monitor
 * does, writing real log files; and a protocol client that checks the byte stream as it arrives.
 */
import { createHash, type Hash } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { WebSocket } from 'ws';
import type { Attempt, PrismaClient, Task } from '../../lib/generated/prisma/client';
import type { Database } from '../../lib/db/client';
import type { AttemptStatus, JobStatus, TaskStatus } from '../../lib/jobs/status';
import { decodeLogChunk } from '../../lib/logs/protocol';
import type { PongMessage, StreamMessage } from '../../lib/api/types';
import { findUpgradeRoute } from '../../lib/server/upgrade';
import { loadStreamLimits, type StreamLimits } from '../../lib/ws/config';
import { WsHub, wsRoutes } from '../../lib/ws';
import { startAttempt, submitJob, transitionAttempt, transitionJob, transitionTask } from '../../lib/store';
import { storeOf } from '../helpers/store';

/** An in-process server: the ws routes on a plain http server, over `db`. */
export interface WsServer {
  url: string;
  hub: WsHub;
  close(): Promise<void>;
}

/** Starts the ws routes on a free port with a fresh hub (limits overridable) over `db`. */
export async function startWsServer(db: Database, limits: Partial<StreamLimits> = {}): Promise<WsServer> {
  const hub = new WsHub({ store: storeOf(db.prisma), limits: { ...loadStreamLimits(), ...limits } });
  const routes = wsRoutes(hub);
  const server = http.createServer((_req, res) => {
    res.statusCode = 404;
    res.end();
  });
  server.on('upgrade', (req, socket, head) => {
    const found = findUpgradeRoute(routes, new URL(req.url ?? '/', 'http://x').pathname);
    if (found) return found.route.handle(req, socket, head, found.params);
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `ws://127.0.0.1:${port}`,
    hub,
    close: async () => {
      await hub.stop();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}

/** A task spec as lib/jobs/spec/ normalizes it (only what the stream reads matters). */
export function taskSpec(maxRestarts = 0) {
  return {
    name: null,
    setup: null,
    run: 'true',
    envs: {},
    workdir: null,
    resources: { cpus: 1, cpusAtLeast: false, memoryGb: null, memoryAtLeast: false },
    jobRecovery: { maxRestartsOnErrors: maxRestarts, recoverOnExitCodes: [] },
  };
}

/**
 * Moves one job through the real store as the monitor does (guarded writes, JobEvents, store
 * bus), with each attempt's log file under `logDir`.
 */
export class JobDriver {
  private constructor(
    readonly prisma: PrismaClient,
    readonly jobId: number,
    readonly tasks: Task[],
    readonly logDir: string,
  ) {}

  /** Submits a job of `taskCount` tasks (each allowing `maxRestarts` restarts; on `nodes` nodes when given). */
  static async create(prisma: PrismaClient, logDir: string, opts: { tasks?: number; maxRestarts?: number; name?: string; nodes?: number } = {}): Promise<JobDriver> {
    const n = opts.tasks ?? 1;
    const specs = Array.from({ length: n }, (_, i) => ({ ...taskSpec(opts.maxRestarts ?? 0), name: `step-${i}`, ...(opts.nodes ? { numNodes: opts.nodes } : {}) }));
    const job = await submitJob(storeOf(prisma), {
      name: opts.name ?? 'ws-test',
      specYaml: 'run: true\n',
      spec: { name: opts.name ?? 'ws-test', tasks: specs },
      specHash: `h-${Math.random()}`,
      cpus: 1,
      tasks: specs.map((s) => ({ name: s.name, spec: s })),
    });
    return new JobDriver(prisma, job.id, job.tasks, logDir);
  }

  /** The store the hub listens to (one per client). */
  get store() {
    return storeOf(this.prisma);
  }

  logPath(task: number, attempt: number): string {
    return path.join(this.logDir, `job-${this.jobId}`, `task-${task}`, `attempt-${attempt}.log`);
  }

  async jobStatus(): Promise<JobStatus> {
    return (await this.prisma.job.findUniqueOrThrow({ where: { id: this.jobId } })).status;
  }

  private async moveJob(to: JobStatus, reason?: string): Promise<void> {
    const from = await this.jobStatus();
    if (from === to) return;
    const r = await transitionJob(this.store, this.jobId, from, to, { reason: reason ?? null, data: to === 'RUNNING' ? { startedAt: new Date() } : {} });
    if (r.outcome !== 'applied') throw new Error(`job ${from} → ${to}: ${r.outcome}`);
  }

  /** Starts attempt `number` of a task (task → STARTING → RUNNING, attempt → RUNNING, job RUNNING). */
  async startAttempt(task: number, number: number, cause: 'first' | 'restart' | 'recovery' = 'first'): Promise<Attempt> {
    const t = await this.prisma.task.findUniqueOrThrow({ where: { id: this.tasks[task].id } });
    if ((await this.jobStatus()) === 'PENDING') await this.moveJob('STARTING');
    const r = await startAttempt(this.store, { taskId: t.id, number, cause, logPath: this.logPath(task, number), taskFrom: t.status as TaskStatus, reason: cause });
    if (r.outcome !== 'applied') throw new Error(`start attempt: ${r.outcome}`);
    const a = await transitionAttempt(this.store, r.row.id, 'STARTING', 'RUNNING', { data: { startedAt: new Date(), pid: 1 } });
    if (a.outcome !== 'applied') throw new Error('attempt → RUNNING');
    await transitionTask(this.store, t.id, 'STARTING', 'RUNNING', { data: { startedAt: new Date() } });
    await this.moveJob('RUNNING');
    return a.row;
  }

  /** Ends an attempt with a status and exit code (as the monitor records an exit). */
  async endAttempt(a: Attempt, status: AttemptStatus, exitCode: number | null): Promise<void> {
    const r = await transitionAttempt(this.store, a.id, 'RUNNING', status, { reason: exitCode === null ? status : `exit code ${exitCode}`, data: { exitCode, endedAt: new Date() } });
    if (r.outcome !== 'applied') throw new Error(`attempt → ${status}: ${r.outcome}`);
  }

  /** Ends a task (from RUNNING). */
  async endTask(task: number, status: TaskStatus, exitCode: number | null = null): Promise<void> {
    const r = await transitionTask(this.store, this.tasks[task].id, 'RUNNING', status, { reason: status, data: { exitCode, endedAt: new Date() } });
    if (r.outcome !== 'applied') throw new Error(`task → ${status}: ${r.outcome}`);
  }

  /** Cancels a task that never started (PENDING → CANCELLED). */
  async cancelPendingTask(task: number): Promise<void> {
    const r = await transitionTask(this.store, this.tasks[task].id, 'PENDING', 'CANCELLED', { reason: 'an earlier task failed' });
    if (r.outcome !== 'applied') throw new Error(`task → CANCELLED: ${r.outcome}`);
  }

  /** Ends the job (from its current status). */
  async endJob(status: JobStatus): Promise<void> {
    await this.moveJob(status, status.toLowerCase());
    await this.prisma.job.update({ where: { id: this.jobId }, data: { endedAt: new Date() } });
  }
}

/** What one connection received, in order (`rank` only on a multi-node attempt's rank-K frame). */
export type Item = { kind: 'json'; msg: StreamMessage | PongMessage } | { kind: 'log'; task: number; attempt: number; offset: number; length: number; rank?: number };

/**
 * Checks log bytes across connections: every chunk of an attempt must start exactly where the
 * previous one ended (nothing lost, nothing twice); keeps a sha256 per attempt (and the bytes
 * when `keep`).
 */
export class ByteLedger {
  readonly next = new Map<string, number>();
  readonly hashes = new Map<string, Hash>();
  readonly bytes = new Map<string, Buffer[]>();
  constructor(private readonly keep = false) {}

  /**
   * Records a chunk (of `rank`'s log, for a multi-node attempt: each rank's bytes on their own).
   * @throws when it does not start where the attempt's (rank's) bytes so far end.
   */
  add(task: number, attempt: number, offset: number, data: Uint8Array, rank = 0): void {
    const k = `${task}/${attempt}${rank > 0 ? `/r${rank}` : ''}`;
    const expected = this.next.get(k) ?? 0;
    if (offset !== expected) throw new Error(`attempt ${k}: chunk at offset ${offset}, expected ${expected}`);
    this.next.set(k, offset + data.length);
    let h = this.hashes.get(k);
    if (!h) this.hashes.set(k, (h = createHash('sha256')));
    h.update(data);
    if (this.keep) {
      const list = this.bytes.get(k) ?? [];
      list.push(Buffer.from(data));
      this.bytes.set(k, list);
    }
  }

  sha256(task: number, attempt: number, rank = 0): string {
    return this.hashes.get(`${task}/${attempt}${rank > 0 ? `/r${rank}` : ''}`)?.copy().digest('hex') ?? createHash('sha256').digest('hex');
  }

  text(task: number, attempt: number, rank = 0): string {
    return Buffer.concat(this.bytes.get(`${task}/${attempt}${rank > 0 ? `/r${rank}` : ''}`) ?? []).toString('utf8');
  }
}

/** A protocol client of `/ws/jobs/:id`. */
export class StreamClient {
  readonly items: Item[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: Array<() => void> = [];
  error: Error | null = null;

  private constructor(
    readonly ws: WebSocket,
    readonly ledger: ByteLedger,
  ) {
    ws.binaryType = 'nodebuffer';
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      try {
        if (isBinary) {
          const c = decodeLogChunk(data);
          this.ledger.add(c.task, c.attempt, c.offset, c.data, c.rank);
          this.items.push({ kind: 'log', task: c.task, attempt: c.attempt, offset: c.offset, length: c.data.length, ...(c.rank !== undefined ? { rank: c.rank } : {}) });
        } else this.items.push({ kind: 'json', msg: JSON.parse(data.toString()) as StreamMessage });
      } catch (err) {
        this.error ??= err as Error;
      }
      this.notify();
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => {
        this.notify();
        resolve({ code, reason: reason.toString() });
      }),
    );
  }

  /** Connects to `url` (a full ws:// URL with path and query), with extra upgrade headers. */
  static connect(url: string, ledger = new ByteLedger(), headers: Record<string, string> = {}): Promise<StreamClient> {
    const ws = new WebSocket(url, { perMessageDeflate: false, headers });
    const c = new StreamClient(ws, ledger);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(c));
      ws.once('error', reject);
    });
  }

  private notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** JSON messages received so far. */
  get messages(): Array<StreamMessage | PongMessage> {
    return this.items.filter((i): i is Extract<Item, { kind: 'json' }> => i.kind === 'json').map((i) => i.msg);
  }

  /** Bytes of log received on this connection. */
  get logBytes(): number {
    return this.items.reduce((n, i) => n + (i.kind === 'log' ? i.length : 0), 0);
  }

  /** Resolves when `pred` holds (checked on every message), rejects after `ms`. */
  async until(pred: () => boolean, ms = 120_000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pred()) {
      if (this.error) throw this.error;
      if (this.ws.readyState === WebSocket.CLOSED && !pred()) throw new Error(`closed before ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
    if (this.error) throw this.error;
  }

  /** Waits for the close and returns it with every message; rethrows a ledger error. */
  async done(ms = 120_000): Promise<{ code: number; reason: string }> {
    const t = new Promise<never>((_, rej) => setTimeout(() => rej(new Error('stream did not close in time')), ms).unref());
    const c = await Promise.race([this.closed, t]);
    if (this.error) throw this.error;
    return c;
  }
}

/** A compact view of the story: JSON messages as short strings, log runs merged per attempt. */
export function story(items: Item[]): string[] {
  const out: string[] = [];
  for (const i of items) {
    if (i.kind === 'log') {
      const last = out[out.length - 1];
      const tag = `log ${i.task}/${i.attempt}`;
      if (last !== tag) out.push(tag);
      continue;
    }
    const m = i.msg;
    switch (m.type) {
      case 'hello':
        out.push(`hello ${m.job.status}`);
        break;
      case 'job':
        out.push(`job ${m.status}`);
        break;
      case 'task':
        out.push(`task ${m.task} ${m.status}`);
        break;
      case 'attempt':
        out.push(`attempt ${m.task}/${m.attempt} ${m.phase}${m.phase === 'end' ? ` ${m.status} exit=${m.exitCode}` : ` ${m.cause}`}${m.restart ? ` restart ${m.restart.n}/${m.restart.max}` : ''}`);
        break;
      case 'end':
        out.push(`end ${m.status}`);
        break;
      case 'error':
        out.push(`error ${m.code}`);
        break;
      case 'pong':
        out.push('pong');
        break;
    }
  }
  return out;
}
