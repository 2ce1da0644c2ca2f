import { randomUUID } from 'node:crypto';
import type { WebhookSubscription } from '../../generated/prisma/client';
import { loadConfig } from '../../config';
import { errMessage, type MonitorResources } from '../resources';
import type { ClaimedDelivery, Delivered, DeliveryResult } from '../../store';
import { humanDuration, signatureHeaders, webhookBody } from './format';
import { retryDelayMs, type WebhookSettings } from './config';
import { openSecret, webhookKey } from './secret';
import { DeliveredResults } from './results';
import { sendWebhook, WebhookAgents, type SendResult } from './send';
import { parseWebhookUrl } from './url';

/**
 * The webhook dispatcher, one of the monitor's systems (docs/design.md §10 "Webhooks"). The
 * outbox rows are written by the guarded write; this system claims the due ones as runs (each
 * subscription's earliest pending row and up to RUN − 1 rows after it; a lease, `FOR UPDATE SKIP
 * LOCKED` on the heads: servers sharing a database never send one row at once), sends each run
 * one request after another over a kept-alive connection, up to `concurrency` runs at once, and
 * records each try under its claim: 2xx answers many at a time (DeliveredResults); a failure at
 * once — due again after a backoff with full jitter, until the retry window (24 h) is over, then
 * the row is `failed` and its subscription disabled with the reason — and the rest of its run is
 * released unsent, to wait behind it (head-of-line: a subscription's rows go out one at a time in
 * event order). Woken by the store bus when a statement wrote rows, by the end of a run, and by a
 * timer for retries and for rows other servers wrote. A row claimed by a server that died is due
 * again once the lease expires: at least once, never lost; the receiver de-duplicates on
 * `webhook-id`, the delivery's id, which every try carries.
 */
export class WebhookSystem {
  /** Runs being sent (each one request at a time). */
  private inFlight = 0;
  private passing: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private key: Buffer | null = null;
  private readonly sends = new Set<Promise<void>>();
  private readonly agents = new WebhookAgents();
  private readonly results = new DeliveredResults((batch) => this.recordDelivered(batch));
  private readonly onBus = (e: { type: string }) => {
    if (e.type === 'outbox') this.kick();
  };
  /** Delivered / retried / failed tries since start (MonitorState). */
  readonly counts = { delivered: 0, retried: 0, failed: 0 };

  /** How often the outbox is looked at when nothing woke the system (rows of other servers). */
  static readonly POLL_MS = 2000;
  /** Rows claimed at most per run: one claim and a few result statements per RUN deliveries. */
  static readonly RUN = 100;

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

  /** Stops claiming; waits (up to the request timeout) for the tries in flight to be recorded and the rest of their runs released. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.res.store.bus.off('change', this.onBus);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    let t: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all([this.passing, ...this.sends]), new Promise<void>((r) => (t = setTimeout(r, this.settings.timeoutMs + 1000)))]);
    clearTimeout(t);
    this.agents.destroy();
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

  /** Claims runs for the free slots and starts sending each. */
  private async pass(): Promise<void> {
    const free = this.settings.concurrency - this.inFlight;
    if (free <= 0 || this.stopped) return;
    const token = randomUUID();
    const claimedAt = Date.now();
    const rows = await this.res.store.webhooks.claim({ limit: free, run: WebhookSystem.RUN, leaseMs: this.settings.leaseMs, now: new Date(claimedAt), token });
    if (rows.length === 0) return;
    const subs = new Map((await this.res.store.webhooks.subscriptions([...new Set(rows.map((r) => r.subscriptionId))])).map((s) => [s.id, s]));
    for (const run of runsOf(rows)) {
      this.inFlight++;
      const p = this.sendRun(run, token, claimedAt, subs.get(run[0].subscriptionId))
        .catch((err: unknown) => this.res.log.error({ err: errMessage(err), delivery: run[0].id }, 'webhooks: recording a try failed; the claim expires and the rows are sent again'))
        .finally(() => {
          this.inFlight--;
          this.sends.delete(p);
          // The subscription's next rows may be due now (head-of-line), and a slot is free.
          this.kick();
        });
      this.sends.add(p);
    }
  }

  /** Sets the timer for the next due row (at most POLL_MS away). */
  private async arm(): Promise<void> {
    if (this.stopped) return;
    let wait = WebhookSystem.POLL_MS;
    // While runs are being sent, the end of each kicks a pass (and this read follows it): during
    // a burst, each bus wake-up would otherwise cost this statement too.
    if (this.inFlight === 0) {
      try {
        const due = await this.res.store.webhooks.nextDue();
        if (due) wait = Math.min(wait, Math.max(10, due.getTime() - Date.now()));
      } catch (err) {
        this.res.log.warn({ err: errMessage(err) }, 'webhooks: reading the next due row failed');
      }
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

  /**
   * Sends a run in order, one request at a time, until its first failure: that row's try is
   * recorded and the rows after it are released unsent (they wait behind it). Before each later
   * row, the claim is extended when less than twice the request timeout is left of it, so a
   * live claim never expires mid-send however long the run takes.
   */
  private async sendRun(run: ClaimedDelivery[], token: string, claimedAt: number, sub: WebhookSubscription | undefined): Promise<void> {
    const w = this.res.store.webhooks;
    const { leaseMs, timeoutMs } = this.settings;
    const rest = (i: number) => run.slice(i).map((r) => r.id);
    let leaseFrom = claimedAt;
    let secret: string | undefined;
    try {
      for (let i = 0; i < run.length; i++) {
        if (i > 0 && this.stopped) return await w.release(rest(i), token);
        if (i > 0 && Date.now() + 2 * timeoutMs > leaseFrom + leaseMs) {
          const at = Date.now();
          // Fewer rows held than asked: another server claimed them after the lease expired.
          if ((await w.extend(rest(i), token, new Date(at + leaseMs))) < run.length - i) return await w.release(rest(i), token);
          leaseFrom = at;
        }
        const row = run[i];
        const t0 = performance.now();
        let r: SendResult;
        if (!sub) {
          r = { ok: false, statusCode: null, latencyMs: 0, error: 'subscription gone', responseHead: null };
        } else {
          try {
            secret ??= this.secretOf(sub);
            const body = webhookBody(row.payload, sub.format, this.settings.publicUrl);
            const headers = signatureHeaders(secret, row.id, new Date(), body);
            r = await sendWebhook({ url: parseWebhookUrl(sub.url), body, headers, timeoutMs, allowPrivate: this.settings.allowPrivate }, this.agents);
          } catch (err) {
            r = { ok: false, statusCode: null, latencyMs: Math.round(performance.now() - t0), error: errMessage(err), responseHead: null };
          }
        }
        const result: DeliveryResult = { statusCode: r.statusCode, latencyMs: r.latencyMs, error: r.error, responseHead: r.responseHead };
        if (r.ok) {
          this.results.add({ id: row.id, token, result, at: new Date() });
          continue;
        }
        await this.recordFailure(row, token, result, sub);
        return await w.release(rest(i + 1), token);
      }
    } finally {
      // Written before the next claim: until then the run's sent rows still hold the line.
      await this.results.flush();
    }
  }

  private async recordDelivered(batch: Delivered[]): Promise<void> {
    try {
      this.counts.delivered += (await this.res.store.webhooks.delivered(batch)).length;
    } catch (err) {
      this.res.log.error({ err: errMessage(err), deliveries: batch.length }, 'webhooks: recording deliveries failed; their claims expire and they are sent again');
    }
  }

  /** Records a failed try under its claim: due again after a backoff, or failed for good (the subscription disabled) past the retry window. */
  private async recordFailure(row: ClaimedDelivery, token: string, result: DeliveryResult, sub: WebhookSubscription | undefined): Promise<void> {
    const w = this.res.store.webhooks;
    const log = { delivery: row.id, subscription: sub?.name, event: row.eventType, jobId: row.jobId, statusCode: result.statusCode, latencyMs: result.latencyMs };
    const now = Date.now();
    const windowEnd = row.retryFrom.getTime() + this.settings.retryWindowMs;
    if (now >= windowEnd) {
      const reason = `deliveries failed for ${humanDuration(this.settings.retryWindowMs)} (last: ${result.error ?? 'error'}); disabled`;
      if (await w.gaveUp(row.id, token, result, reason)) {
        this.counts.failed++;
        this.res.log.warn({ ...log, err: result.error }, `webhooks: ${row.id} failed for good; subscription ${sub?.name ?? '?'} disabled`);
      }
      return;
    }
    const next = Math.min(windowEnd, now + retryDelayMs(this.settings, row.attempts + 1));
    if (await w.retry(row.id, token, result, new Date(next))) {
      this.counts.retried++;
      this.res.log.info({ ...log, err: result.error, retryInMs: next - now }, `webhooks: ${row.id} try ${row.attempts + 1} failed (${result.error}); retrying`);
    }
  }
}

/** A claim's rows as runs: a subscription's event rows together (in event order, as claimed), each test event alone. */
function runsOf(rows: ClaimedDelivery[]): ClaimedDelivery[][] {
  const runs: ClaimedDelivery[][] = [];
  const bySub = new Map<number, ClaimedDelivery[]>();
  for (const row of rows) {
    if (row.jobEventId === null) {
      runs.push([row]);
      continue;
    }
    let run = bySub.get(row.subscriptionId);
    if (!run) bySub.set(row.subscriptionId, (run = []));
    run.push(row);
  }
  // The claim answers them in event order; sorted here too, since the order is the promise.
  for (const run of bySub.values()) run.sort((a, b) => (a.jobEventId ?? 0) - (b.jobEventId ?? 0));
  return [...runs, ...bySub.values()];
}
