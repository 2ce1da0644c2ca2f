/**
 * The schedule loop of one server (docs/design.md §19 "Schedules"): every
 * JOBDECK_SCHEDULE_TICK_MS it fires the schedules that are due (lib/control/schedule-fire.ts).
 * Every server runs one: which of them fires a given time does not matter — the fire is a
 * guarded write (lib/store writeFire), so each time is fired once. The clock is injectable so
 * that tests move time instead of waiting for it.
 */
import type { Logger } from 'pino';
import { fireDueSchedules, type FireContext, type FireResult } from '../control';
import { effectiveQuota, type RoleQuotas } from '../jobs/quotas';
import type { Actor } from '../jobs/roles';
import type { ScheduleSettings } from '../jobs/schedule';
import { userRow, type Store } from '../store';

/** What the loop is built from. */
export interface ScheduleLoopOptions {
  store: Store;
  settings: ScheduleSettings;
  /** The role defaults of the per-user quotas: a fire's job counts against its owner's pending quota. */
  quotas: RoleQuotas;
  /** This server's id (leases on), recorded on its fires; null on one server. */
  serverId: string | null;
  log: Logger;
  /** Now, in ms (default Date.now). */
  clock?: () => number;
}

/** A server's schedule loop: start(), stop(), and one look on demand (tick). */
export class ScheduleLoop {
  readonly settings: ScheduleSettings;
  readonly fire: FireContext;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<FireResult[]> | null = null;
  private stopped = true;

  constructor(private readonly o: ScheduleLoopOptions) {
    this.settings = o.settings;
    this.fire = { settings: o.settings, serverId: o.serverId, actorOf: (id) => this.actorOf(id) };
  }

  /** Now, by the loop's clock (ms). */
  now(): number {
    return (this.o.clock ?? Date.now)();
  }

  /** The schedule owner as the actor its jobs run as (its role and pending quota); null when gone or disabled. */
  private async actorOf(userId: number | null): Promise<Actor | null> {
    if (userId === null) return null;
    const u = await userRow(this.o.store, { id: userId });
    if (!u || u.disabledAt !== null) return null;
    const role = u.role === 'admin' || u.role === 'member' ? u.role : null;
    if (!role) return null;
    return { userId: u.id, name: u.name, role, tokenId: null, tokenPrefix: null, ip: null, pendingQuota: effectiveQuota({ ...u, role }, 'maxPendingJobs', this.o.quotas) };
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops the timer and waits for a look under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** One look now (a test's entry point; the timer's too). Looks never overlap. */
  tick(): Promise<FireResult[]> {
    this.running ??= fireDueSchedules(this.o.store, this.now(), this.fire).finally(() => (this.running = null));
    return this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.tick().then(
        (fired) => {
          for (const f of fired.filter((x) => x.applied)) this.o.log.info({ schedule: f.schedule, outcome: f.outcome, jobId: f.jobId }, `schedule ${f.schedule}: ${f.outcome}${f.jobId ? ` job ${f.jobId}` : ''}${f.detail ? ` (${f.detail})` : ''}`);
        },
        (err: unknown) => this.o.log.error({ err }, 'schedules: a look failed; the next one tries again'),
      ).finally(() => this.schedule(this.settings.tickMs));
    }, ms);
    this.timer.unref?.();
  }
}
