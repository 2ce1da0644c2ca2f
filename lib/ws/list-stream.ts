import type { WebSocket } from 'ws';
import { getJobSummaries } from '../api/views';
import type { StoreEvent, StoreScope } from '../store';
import { logger } from '../log';
import { CLOSE } from '../logs/protocol';
import type { ListMessage, PongMessage } from '../api/types';
import { isPingMessage, type StreamLimits } from './config';

/**
 * The list stream on `/ws/jobs` (dashboard jobs page): `created` / `updated` / `deleted` per job,
 * coalesced process-wide — changes to one job within listCoalesceMs become one message carrying
 * the job as it is when sent. One database read serves every connected client (one query batch
 * per flush, whatever the number of jobs or clients). A client that holds more than listCap
 * unsent bytes is closed with 4408 (it refetches the list and reconnects).
 */
export class ListStreams {
  private readonly clients = new Set<WebSocket>();
  private readonly dirty = new Map<number, 'created' | 'updated'>();
  private readonly deleted = new Set<number>();
  private timer: NodeJS.Timeout | null = null;
  private flushing = false;
  private lastFlush = 0;

  constructor(
    private readonly store: StoreScope,
    private readonly limits: StreamLimits,
  ) {}

  /** Number of connected list clients. */
  get size(): number {
    return this.clients.size;
  }

  /** Adds a connected client (closes itself on bad messages; removed on close). */
  add(ws: WebSocket): void {
    this.clients.add(ws);
    ws.on('close', () => this.clients.delete(ws));
    ws.on('error', () => this.clients.delete(ws));
    ws.on('message', (data, isBinary) => {
      if (isPingMessage(data, isBinary)) {
        this.send(ws, { type: 'pong' });
        return;
      }
      ws.send(JSON.stringify({ type: 'error', code: 'bad_request', message: 'unexpected client message: a client sends nothing but {"type":"ping"}' }));
      ws.close(CLOSE.BAD_REQUEST, 'bad_request');
      this.clients.delete(ws);
    });
  }

  /** A store change (from the hub's bus listener). */
  onStoreEvent(e: StoreEvent): void {
    if (this.clients.size === 0 || e.type === 'queues' || e.type === 'outbox') return;
    if (e.type === 'deleted') {
      this.dirty.delete(e.jobId);
      this.deleted.add(e.jobId);
    } else {
      const was = this.dirty.get(e.jobId);
      this.dirty.set(e.jobId, was === 'created' || e.type === 'created' ? 'created' : 'updated');
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.flushing) return;
    const wait = Math.max(0, this.lastFlush + this.limits.listCoalesceMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, wait);
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    const dirty = new Map(this.dirty);
    const deleted = [...this.deleted];
    this.dirty.clear();
    this.deleted.clear();
    try {
      const messages: ListMessage[] = deleted.map((jobId) => ({ type: 'deleted', jobId }));
      if (dirty.size) {
        const ids = [...dirty.keys()];
        const jobs = await getJobSummaries(this.store, ids);
        const found = new Set(jobs.map((j) => j.id));
        for (const job of jobs) messages.push({ type: dirty.get(job.id) === 'created' ? 'created' : 'updated', job });
        // A job that vanished between its change and this read was deleted.
        for (const id of ids) if (!found.has(id) && !deleted.includes(id)) messages.push({ type: 'deleted', jobId: id });
      }
      // Spacing is measured between sends, so a slow read never squeezes two messages together.
      this.lastFlush = Date.now();
      for (const ws of this.clients) {
        if (ws.bufferedAmount > this.limits.listCap) {
          ws.send(JSON.stringify({ type: 'error', code: 'slow_consumer', message: 'the client did not keep up; refetch the list and reconnect' }));
          ws.close(CLOSE.SLOW_CONSUMER, 'slow consumer');
          this.clients.delete(ws);
          continue;
        }
        for (const m of messages) this.send(ws, m);
      }
    } catch (err) {
      this.lastFlush = Date.now();
      logger().error({ err }, 'list stream flush failed');
    } finally {
      this.flushing = false;
      if (this.dirty.size || this.deleted.size) this.schedule();
    }
  }

  private send(ws: WebSocket, m: ListMessage | PongMessage): void {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(m));
  }

  /** Closes every list client with `code` (1001 on server stop). */
  closeAll(code: number, reason: string): WebSocket[] {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const all = [...this.clients];
    for (const ws of all) ws.close(code, reason);
    this.clients.clear();
    return all;
  }
}
