/**
 * The dispatcher's 2xx answers on their way to the database (docs/design.md §10 "Webhooks"):
 * recorded together, one statement for all that arrived while the previous one was written or
 * within SPACING_MS of it. The first answer after a quiet spell is written at once; a burst is
 * written a few dozen rows a statement instead of one statement per row (bench/README.md
 * "Webhooks"). An answer not yet written when the server dies leaves its row claimed: it is sent
 * again once the lease expires (at least once; the receiver de-duplicates on `webhook-id`).
 */
import type { Delivered } from '../../store';

/** Batches 2xx results (see the module comment). */
export class DeliveredResults {
  /** The least time between the starts of two writes (ms). */
  static readonly SPACING_MS = 20;
  private pending: Delivered[] = [];
  private writing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastStart = 0;

  /** `write` records a batch and never rejects (a failed write leaves the claims to expire). */
  constructor(private readonly write: (batch: Delivered[]) => Promise<void>) {}

  /** Queues one answer to record. */
  add(d: Delivered): void {
    this.pending.push(d);
    this.schedule();
  }

  /** Resolves once every answer added so far is written (the write under way included). */
  async flush(): Promise<void> {
    while (this.writing || this.pending.length) {
      if (this.writing) await this.writing;
      else this.start();
    }
  }

  private schedule(): void {
    if (this.writing || this.timer || this.pending.length === 0) return;
    const wait = this.lastStart + DeliveredResults.SPACING_MS - Date.now();
    if (wait <= 0) {
      this.start();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.writing) this.start();
    }, wait);
  }

  private start(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending.splice(0);
    this.lastStart = Date.now();
    this.writing = this.write(batch).finally(() => {
      this.writing = null;
      this.schedule();
    });
  }
}
