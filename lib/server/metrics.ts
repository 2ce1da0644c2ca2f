/**
 * Prometheus metrics of one server (`GET /metrics`, text exposition format; prom-client), named by
 * Prometheus' rules: a `jobdeck_` prefix, base units (seconds, bytes), `_total` on counters, and
 * no per-job label (a label per job id would make a series per job). Operator reference:
 * README "Metrics".
 *
 * Each figure comes from the one place its thing happens: status changes from the store's bus (a
 * guarded write announces each JobEvent after commit — lib/store/bus.ts; only this server's own:
 * another server's, relayed to this bus, is counted by that server), restarts and recoveries
 * from the monitor's counters (incremented where the restart and recovery decisions are taken),
 * queue length, pass duration and WebSocket figures from their owners at scrape time, the jobs
 * by status from one GROUP BY at scrape time, and GPU use by user and queue from the attempts that
 * held GPUs (lib/store gpuSecondsByUser: one statement per scrape; the users and queues are few,
 * so the labels stay few). The process' default metrics (CPU, RSS, heap, event
 * loop lag) keep prom-client's conventional `process_` / `nodejs_` names.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Attempt, Job } from '../generated/prisma/client';
import { JOB_STATUSES, isTerminal } from '../jobs/status';
import type { Monitor } from '../monitor/monitor';
import { gpuSecondsByUser, jobStatusCounts, type Store, type StoreEvent } from '../store';
import type { WsHub } from '../ws/hub';

/** Buckets of the wait and latency histograms (seconds): 10 ms to 1 h. */
const WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** A server's metrics: its registry, fed by the store's bus until close(). */
export interface Metrics {
  readonly registry: Registry;
  /** Answers `GET /metrics` (and HEAD); any other method 405. */
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Stops listening to the bus. */
  close(): void;
}

/** What the metrics read from. */
export interface MetricsSources {
  store: Store;
  monitor: Monitor;
  ws: WsHub;
}

/**
 * Builds a server's metrics (see the module comment). Listens to `store.bus` at once, so build it
 * before the monitor starts: the start-up recovery's writes count too.
 */
export function createMetrics(src: MetricsSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const { store, monitor, ws } = src;

  new Gauge({
    name: 'jobdeck_jobs',
    help: 'Jobs in the database by status.',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const counts = await jobStatusCounts(store, {});
      for (const s of JOB_STATUSES) this.set({ status: s }, counts.byStatus[s] ?? 0);
    },
  });
  gpuMetrics(registry, store);
  const finished = new Counter({ name: 'jobdeck_attempts_finished_total', help: 'Attempts this server ended, by outcome (the attempt status they ended in); sum over the servers for the total.', labelNames: ['outcome'], registers: [registry] });
  const jobsEnded = new Counter({ name: 'jobdeck_jobs_finished_total', help: 'Jobs this server ended, by status; sum over the servers for the total.', labelNames: ['status'], registers: [registry] });
  fromMonitor(registry, 'jobdeck_restarts_total', 'Restarts decided after a task’s own failure (since this server started).', () => monitor.state().restarts);
  fromMonitor(registry, 'jobdeck_recoveries_total', 'Recoveries of attempts the executor lost (since this server started).', () => monitor.state().recoveries);
  const wait = new Histogram({ name: 'jobdeck_job_start_wait_seconds', help: 'Time from a job’s submit to its first start (PENDING → STARTING).', buckets: WAIT_BUCKETS, registers: [registry] });
  const latency = new Histogram({
    name: 'jobdeck_exit_to_status_seconds',
    help: 'Time from an attempt’s exit (as its executor recorded it) to the status write that ended it.',
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  gauge(registry, 'jobdeck_monitor_pass_duration_seconds', 'Duration of the monitor’s last reconcile pass.', () => (monitor.state().lastReconcileDurationMs ?? 0) / 1000);
  gauge(registry, 'jobdeck_admission_queue_length', 'PENDING jobs waiting for capacity at the last admission pass.', () => monitor.state().jobsWaiting);
  gauge(registry, 'jobdeck_usage_sampling_duration_seconds', 'Duration of the last resource-usage sampling round.', () => (monitor.usageStats().lastRoundMs ?? 0) / 1000);
  gauge(registry, 'jobdeck_websocket_clients', 'Open WebSocket connections (job and list streams).', () => ws.socketCount);
  fromMonitor(registry, 'jobdeck_websocket_log_bytes_sent_total', 'Bytes of log frames sent to WebSocket clients.', () => ws.logBytesSent);

  const onChange = (e: StoreEvent) => {
    const ev = e.event;
    // Another server's write, heard through the relay: that server counts it (each job once in
    // a sum over the servers).
    if (e.type !== 'event' || !ev || e.remote) return;
    if (ev.entity === 'attempt' && isTerminal('attempt', ev.to)) {
      finished.inc({ outcome: ev.to });
      const endedAt = (e.row as Attempt | undefined)?.endedAt;
      if (endedAt) latency.observe(Math.max(0, ev.at.getTime() - endedAt.getTime()) / 1000);
    } else if (ev.entity === 'job') {
      if (isTerminal('job', ev.to)) jobsEnded.inc({ status: ev.to });
      const submittedAt = (e.row as Job | undefined)?.submittedAt;
      if (ev.from === 'PENDING' && ev.to === 'STARTING' && submittedAt) wait.observe(Math.max(0, ev.at.getTime() - submittedAt.getTime()) / 1000);
    }
  };
  store.bus.on('change', onChange);

  return {
    registry,
    async serve(req, res) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
        res.end('only GET /metrics\n');
        return;
      }
      try {
        const body = await registry.metrics();
        res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
        res.end(req.method === 'HEAD' ? undefined : body);
      } catch (err) {
        res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`metrics unavailable: ${err instanceof Error ? err.message : String(err)}\n`);
      }
    },
    close() {
      store.bus.off('change', onChange);
    },
  };
}

/**
 * `jobdeck_gpu_seconds_total{user,queue}` (GPUs × seconds the attempts held them, all time: a
 * deleted job's share leaves it, which Prometheus reads as a counter reset) and
 * `jobdeck_gpus_in_use{user,queue}`, one read for both per scrape. `user` is the submitter's name
 * (empty for a job without one).
 */
function gpuMetrics(registry: Registry, store: Store): void {
  let read: { at: number; rows: Promise<Awaited<ReturnType<typeof gpuSecondsByUser>>> } | null = null;
  // The two collectors of one scrape share one query.
  const rows = () => {
    if (!read || Date.now() - read.at > 500) read = { at: Date.now(), rows: gpuSecondsByUser(store) };
    return read.rows;
  };
  new Counter({
    name: 'jobdeck_gpu_seconds_total',
    help: 'GPU-seconds used by attempts (GPUs they held × their run time), by submitter and queue; read from the database: every server tells the same total.',
    labelNames: ['user', 'queue'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await rows()) this.inc({ user: r.user ?? '', queue: r.queue }, r.gpuSeconds);
    },
  });
  new Gauge({
    name: 'jobdeck_gpus_in_use',
    help: 'GPUs held by running attempts now, by submitter and queue (from the database, like jobdeck_jobs).',
    labelNames: ['user', 'queue'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await rows()) if (r.gpusNow > 0) this.set({ user: r.user ?? '', queue: r.queue }, r.gpusNow);
    },
  });
}

/** A gauge read at scrape time. */
function gauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/** A counter whose total is kept by its owner (read at scrape time; only ever grows). */
function fromMonitor(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}
