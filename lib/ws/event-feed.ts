import type { Attempt, JobEvent } from '../generated/prisma/client';
import { jobEventsAfter, type StoreScope } from '../store';
import { isTerminal } from '../jobs/status';
import type { StreamLimits } from './config';

/**
 * One job stream's feed of the job's JobEvents: each event once, in id order, from two sources
 * — the store bus (the committed row, no query on the latency path) and a poll of the table (the
 * safety net for anything the bus did not bring). The poll reads from a floor that trails by
 * `eventLagMs`, so an event committed late with a smaller id is still seen; ids at or below the
 * floor are forgotten (docs/design.md, "Logs and streams").
 */
export class JobEventFeed {
  /** Something changed that the bus did not bring as a row: fetch() before trusting `pending`. */
  dirty = true;
  /** When the last fetch() answered (epoch ms). */
  lastFetch = 0;
  /** Events not processed yet, in id order (the stream shifts them off as it sends). */
  readonly pending: JobEvent[] = [];
  private floor = 0;
  private readonly seen = new Set<number>();
  /** Attempt rows the bus brought with their terminal event (event id → row), until taken. */
  private readonly endRows = new Map<number, Attempt>();

  constructor(
    private readonly store: StoreScope,
    private readonly jobId: number,
    private readonly limits: Pick<StreamLimits, 'eventLagMs'>,
  ) {}

  /**
   * A committed event of this job from the bus, with the row its write left (`row`: kept only
   * when the event ends an attempt). Merged into `pending` in id order unless already seen.
   */
  offer(ev: JobEvent, row: unknown): void {
    if (ev.id > this.floor && !this.seen.has(ev.id)) {
      this.seen.add(ev.id);
      let i = this.pending.length;
      while (i > 0 && this.pending[i - 1].id > ev.id) i--;
      this.pending.splice(i, 0, ev);
      if (ev.entity === 'attempt' && row && isTerminal('attempt', ev.to)) this.endRows.set(ev.id, row as Attempt);
    }
  }

  /**
   * Reads new JobEvents of this job into `pending` (id order). Reads from a floor that trails by
   * eventLagMs so an event committed late with a smaller id is still seen. @returns how many.
   */
  async fetch(): Promise<number> {
    this.dirty = false;
    const now = Date.now();
    const rows = await jobEventsAfter(this.store, this.jobId, this.floor);
    this.lastFetch = Date.now();
    const fresh = rows.filter((r) => !this.seen.has(r.id));
    for (const r of fresh) this.seen.add(r.id);
    for (const r of rows) {
      if (r.at.getTime() < now - this.limits.eventLagMs && this.seen.has(r.id)) this.floor = r.id;
      else break;
    }
    for (const id of this.seen) if (id <= this.floor) this.seen.delete(id);
    if (fresh.length) {
      this.pending.push(...fresh);
      this.pending.sort((x, y) => x.id - y.id);
    }
    return fresh.length;
  }

  /** The attempt row the bus brought with event `id`, once (later calls: undefined). */
  takeEndRow(id: number): Attempt | undefined {
    const row = this.endRows.get(id);
    this.endRows.delete(id);
    return row;
  }
}
