import { randomUUID } from 'node:crypto';
import type { WebhookSubscription } from '../../generated/prisma/client';
import { loadConfig } from '../../config';
import { errMessage, type MonitorResources } from '../resources';
import type { ClaimedDelivery, DeliveryResult } from '../../store';
import { humanDuration, signatureHeaders, webhookBody } from './format';
import { retryDelayMs, type WebhookSettings } from './config';
import { openSecret, webhookKey } from './secret';
import { sendWebhook, type SendResult } from './send';
import { parseWebhookUrl } from './url';

/**
 * The webhook dispatcher, one of the monitor's systems (docs/design.md §10 "Webhooks"). The
 * outbox rows are written by the guarded write; this system claims the due ones (a lease, `FOR
 * UPDATE SKIP LOCKED`: servers sharing a database never send one row at once), sends them with
 * bounded concurrency and records each try under its claim: delivered on a 2xx; otherwise due
 * again after a backoff with full jitter, until the retry window (24 h) is over — then the row is
 * `failed` and its subscription disabled with the reason. A subscription's rows go out one at a
 * time in event order (the claim's head-of-line rule). Woken by the store bus when a statement
 * wrote rows, and by a timer for retries and for rows other servers wrote. A row claimed by a
 * server that died is due again once the lease expires: at least once, never lost; the receiver
 * de-duplicates on `webhook-id`, the delivery's id, which every try carries.
 */
export class WebhookSystem {
  private inFlight = 0;
  private passing: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private key: Buffer | null = null;
  private readonly sends = new Set<Promise<void>>();
  private readonly onBus = (e: { type: string }) => {
    if (e.type === 'outbox') this.kick();
  };
  /** Delivered / retried / failed tries since start (MonitorState). */
  readonly counts = { delivered: 0, retried: 0, failed: 0 };

  /** How often the outbox is looked at when nothing woke the system (rows of other servers). */
  static readonly POLL_MS = 2000;

  constructor(
    private readonly res: MonitorResources,
    private readonly settings: WebhookSettings,
  ) {}

  /** Starts listening and sends what is due (rows left by an earlier run included). */
  start(): void {
    if (!this.settings.enabled || !this.stopped) return;
    this.stopped = false;
    this.res.store.bus.on('change', this.onBus);
    this.kick();
  }

  /** Stops claiming; waits (up to the request timeout) for the tries in flight to be recorded. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.res.store.bus.off('change', this.onBus);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    let t: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all([this.passing, ...this.sends]), new Promise<void>((r) => (t = setTimeout(r, this.settings.timeoutMs + 1000)))]);
    clearTimeout(t);
  }

  /** Resolves once no pass and no send is under way (tests). */
  async idle(): Promise<void> {
    while (this.passing || this.sends.size) await Promise.all([this.passing, ...this.sends]);
  }

  /** Runs a claim pass now, or right after the one under way. */
  kick(): void {
    if (this.stopped) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = this.pass()
      .catch((err: unknown) => this.res.log.warn({ err: errMessage(err) }, 'webhooks: claim pass failed; retrying'))
      .finally(() => {
        this.passing = null;
        if (this.again) {
          this.again = false;
          this.kick();
        } else void this.arm();
      });
  }

  /** Claims what the free slots can send and starts each send. */
  private async pass(): Promise<void> {
    for (;;) {
      const free = this.settings.concurrency - this.inFlight;
      if (free <= 0 || this.stopped) return;
      const token = randomUUID();
      const rows = await this.res.store.webhooks.claim({ limit: free, leaseMs: this.settings.leaseMs, now: new Date(), token });
      if (rows.length === 0) return;
      const subs = new Map((await this.res.store.webhooks.subscriptions([...new Set(rows.map((r) => r.subscriptionId))])).map((s) => [s.id, s]));
      for (const row of rows) {
        this.inFlight++;
        const p = this.sendOne(row, token, subs.get(row.subscriptionId))
          .catch((err: unknown) => this.res.log.error({ err: errMessage(err), delivery: row.id }, 'webhooks: recording a try failed; the claim expires and the row is sent again'))
          .finally(() => {
            this.inFlight--;
            this.sends.delete(p);
            // The subscription's next row may be due now (head-of-line), and a slot is free.
            this.kick();
          });
        this.sends.add(p);
      }
      if (rows.length < free) return;
    }
  }

  /** Sets the timer for the next due row (at most POLL_MS away). */
  private async arm(): Promise<void> {
    if (this.stopped) return;
    let wait = WebhookSystem.POLL_MS;
    try {
      const due = await this.res.store.webhooks.nextDue();
      if (due) wait = Math.min(wait, Math.max(10, due.getTime() - Date.now()));
    } catch (err) {
      this.res.log.warn({ err: errMessage(err) }, 'webhooks: reading the next due row failed');
    }
    if (this.stopped || this.passing) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.kick();
    }, wait);
    this.timer.unref?.();
  }

  private secretOf(sub: WebhookSubscription): string {
    this.key ??= webhookKey(this.res.home ?? loadConfig().home);
    return openSecret(this.key, sub.secretEnc);
  }

  /** One try of one claimed row, recorded under its claim. */
  private async sendOne(row: ClaimedDelivery, token: string, sub: WebhookSubscription | undefined): Promise<void> {
    const t0 = performance.now();
    let r: SendResult;
    if (!sub) {
      r = { ok: false, statusCode: null, latencyMs: 0, error: 'subscription gone', responseHead: null };
    } else {
      try {
        const body = webhookBody(row.payload, sub.format, this.settings.publicUrl);
        const headers = signatureHeaders(this.secretOf(sub), row.id, new Date(), body);
        r = await sendWebhook({ url: parseWebhookUrl(sub.url), body, headers, timeoutMs: this.settings.timeoutMs, allowPrivate: this.settings.allowPrivate });
      } catch (err) {
        r = { ok: false, statusCode: null, latencyMs: Math.round(performance.now() - t0), error: errMessage(err), responseHead: null };
      }
    }
    const result: DeliveryResult = { statusCode: r.statusCode, latencyMs: r.latencyMs, error: r.error, responseHead: r.responseHead };
    const log = { delivery: row.id, subscription: sub?.name, event: row.eventType, jobId: row.jobId, statusCode: r.statusCode, latencyMs: r.latencyMs };
    const w = this.res.store.webhooks;
    if (r.ok) {
      if (await w.delivered(row.id, token, result, new Date())) this.counts.delivered++;
      return;
    }
    const now = Date.now();
    const windowEnd = row.retryFrom.getTime() + this.settings.retryWindowMs;
    if (now >= windowEnd) {
      const reason = `deliveries failed for ${humanDuration(this.settings.retryWindowMs)} (last: ${r.error ?? 'error'}); disabled`;
      if (await w.gaveUp(row.id, token, result, reason)) {
        this.counts.failed++;
        this.res.log.warn({ ...log, err: r.error }, `webhooks: ${row.id} failed for good; subscription ${sub?.name ?? '?'} disabled`);
      }
      return;
    }
    const next = Math.min(windowEnd, now + retryDelayMs(this.settings, row.attempts + 1));
    if (await w.retry(row.id, token, result, new Date(next))) {
      this.counts.retried++;
      this.res.log.info({ ...log, err: r.error, retryInMs: next - now }, `webhooks: ${row.id} try ${row.attempts + 1} failed (${r.error}); retrying`);
    }
  }
}
