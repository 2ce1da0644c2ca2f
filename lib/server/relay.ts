/**
 * The store bus across servers (docs/design.md "Replicas", "Events from any server"): with
 * several servers on one PostgreSQL, each announces its committed writes with `NOTIFY jobdeck`
 * — the payload is small: the sender's id and, per write, its kind, job id and JobEvent id — and
 * listens for the others'. A server reads the JobEvent rows of a notification once (one query,
 * in id order, so per-job order is kept) and emits them on its own bus marked `remote`, for its
 * monitor (a cancel reaches the owner at once) and its streams (a client on any server follows
 * every job live). A notification lost while the listening connection is down is covered by
 * the streams' database poll and the monitor's reconcile pass, as before.
 */
import pg from 'pg';
import type { Logger } from 'pino';
import { createdJobs, jobEventsByIds, notifyChannel, type Store, type StoreEvent } from '../store';

/** The channel. */
const CHANNEL = 'jobdeck';
/** PostgreSQL's payload limit is 8000 bytes: stay below it. */
const MAX_PAYLOAD = 7000;

type Kind = StoreEvent['type'];
/**
 * Every kind of the bus, by its index in the payload (append only: servers of two versions may
 * share the channel during an upgrade). `outbox` wakes the other servers' webhook dispatchers;
 * `token` (an attempt's new token, relayed without its row) has them read their users and tokens
 * again at once, so an attempt may call any of them from its start.
 */
const KINDS = ['event', 'created', 'deleted', 'cancel-requested', 'updated', 'queues', 'outbox', 'logs-removed', 'token'] as const satisfies readonly Kind[];
// A bus kind missing from KINDS would encode as -1 and make the whole notification unreadable.
const EVERY_KIND: Exclude<Kind, (typeof KINDS)[number]> extends never ? true : never = true;
void EVERY_KIND;

/** One announced write: kind, job, JobEvent id (0: none). */
interface Item {
  kind: Kind;
  jobId: number;
  eventId: number;
  changed?: StoreEvent['changed'];
}

/** Encodes items as `sender|k:job:event[:changed],…` payloads, each ≤ MAX_PAYLOAD bytes. */
export function encodeNotifications(sender: string, items: readonly Item[]): string[] {
  const out: string[] = [];
  let cur: string[] = [];
  let size = sender.length + 1;
  for (const it of items) {
    const s = `${KINDS.indexOf(it.kind)}:${it.jobId}:${it.eventId}${it.changed ? `:${it.changed}` : ''}`;
    if (cur.length && size + s.length + 1 > MAX_PAYLOAD) {
      out.push(`${sender}|${cur.join(',')}`);
      cur = [];
      size = sender.length + 1;
    }
    cur.push(s);
    size += s.length + 1;
  }
  if (cur.length) out.push(`${sender}|${cur.join(',')}`);
  return out;
}

/** Decodes a payload (null: malformed — another program on the channel). */
export function decodeNotification(payload: string): { sender: string; items: Item[] } | null {
  const bar = payload.indexOf('|');
  if (bar <= 0) return null;
  const items: Item[] = [];
  for (const part of payload.slice(bar + 1).split(',')) {
    const [k, job, ev, changed] = part.split(':');
    const kind: Kind | undefined = KINDS[Number(k)];
    const jobId = Number(job);
    const eventId = Number(ev);
    if (!kind || !Number.isSafeInteger(jobId) || !Number.isSafeInteger(eventId)) return null;
    items.push({ kind, jobId, eventId, ...(changed === 'priority' || changed === 'pendingReason' || changed === 'nextAttemptAt' ? { changed } : {}) });
  }
  return { sender: payload.slice(0, bar), items };
}

/** The relay of one server (see the module comment). */
export class NotifyRelay {
  private client: pg.Client | null = null;
  private queue: Item[] = [];
  private flushing = false;
  private stopped = false;
  private reconnect: NodeJS.Timeout | null = null;
  /** Notifications are handled one after the other, in arrival order. */
  private chain: Promise<void> = Promise.resolve();
  private readonly onLocal = (e: StoreEvent) => this.local(e);

  constructor(
    private readonly url: string,
    private readonly store: Store,
    private readonly serverId: string,
    private readonly log: Logger,
  ) {}

  /** Connects the listening session and starts relaying this server's writes. */
  async start(): Promise<void> {
    this.store.bus.on('change', this.onLocal);
    await this.listen();
  }

  /** Stops relaying and closes the listening session. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.store.bus.off('change', this.onLocal);
    if (this.reconnect) clearTimeout(this.reconnect);
    await this.chain.catch(() => undefined);
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('notification', (n) => {
      if (n.channel !== CHANNEL || !n.payload) return;
      const msg = decodeNotification(n.payload);
      if (!msg || msg.sender === this.serverId) return;
      this.chain = this.chain.then(() => this.remote(msg.items)).catch((err: unknown) => this.log.warn({ err }, 'relay: could not read a notification; the poll covers it'));
    });
    client.on('error', (err) => {
      this.log.warn({ err: err.message }, 'relay: listening connection lost; reconnecting (the poll covers the gap)');
      void client.end().catch(() => undefined);
      if (this.client === client) this.client = null;
      this.retry();
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.client = client;
  }

  private retry(): void {
    if (this.stopped || this.reconnect) return;
    this.reconnect = setTimeout(() => {
      this.reconnect = null;
      if (this.stopped) return;
      this.listen().catch(() => this.retry());
    }, 1000);
    this.reconnect.unref?.();
  }

  private local(e: StoreEvent): void {
    if (e.remote || this.stopped) return;
    this.queue.push({ kind: e.type, jobId: e.jobId, eventId: e.event?.id ?? 0, ...(e.changed ? { changed: e.changed } : {}) });
    if (!this.flushing) {
      this.flushing = true;
      // Writes of one turn go as one notification.
      setImmediate(() => void this.flush());
    }
  }

  private async flush(): Promise<void> {
    const items = this.queue;
    this.queue = [];
    try {
      for (const payload of encodeNotifications(this.serverId, items)) await notifyChannel(this.store, CHANNEL, payload);
    } catch (err) {
      this.log.warn({ err }, 'relay: could not notify the other servers; their poll covers it');
    } finally {
      this.flushing = false;
      if (this.queue.length && !this.stopped) {
        this.flushing = true;
        setImmediate(() => void this.flush());
      }
    }
  }

  /** Reads the JobEvents of `items` once and emits everything on the local bus, in order. */
  private async remote(items: Item[]): Promise<void> {
    const ids = items.filter((i) => i.eventId > 0).map((i) => i.eventId);
    const events = await jobEventsByIds(this.store, ids);
    const created = items.filter((i) => i.kind === 'created').map((i) => i.jobId);
    const jobs = new Map((await createdJobs(this.store, created)).map((j) => [j.id, j]));
    for (const it of items) {
      const event = it.eventId > 0 ? events.get(it.eventId) : undefined;
      // A status event whose row is gone (the job was deleted since): nothing to tell.
      if (it.kind === 'event' && !event) continue;
      const job = jobs.get(it.jobId);
      if (it.kind === 'created' && !job) continue;
      this.store.bus.emit({
        type: it.kind,
        jobId: it.jobId,
        remote: true,
        ...(event ? { event } : {}),
        ...(job ? { job: { cpus: job.cpus, executor: job.executor, nodes: job.nodes, priority: job.priority } } : {}),
        ...(it.changed ? { changed: it.changed } : {}),
      });
    }
  }
}
