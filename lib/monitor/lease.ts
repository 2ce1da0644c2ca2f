import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { hostIdentity, pidExists } from '../proc';
import { claimJobs, expireServers, hostServers, recordServerEvents, registerServer, releaseLeases, renewLeases, type Claimed, type Store } from '../store';
import { errMessage, type MonitorResources } from './resources';
import type { LeaseOptions } from './types';

/**
 * The lease system (docs/design.md "Replicas"): with several servers on one PostgreSQL, each
 * non-terminal job is owned by one live server, and only the owner's monitor steps it. Every
 * `leaseMs / 3` one round renews this server's heartbeat and ALL its leases in one statement
 * (lib/store renewLeases), notes the jobs that are no longer its own (taken over while it was
 * paused: dropped, and logged), then claims unowned or expired jobs up to its fair share
 * (lib/store claimJobs). A claim taken from another server is a takeover: logged, and written
 * into the job's history. A new job is claimed at once, by id, by the server that accepted it.
 * At a clean stop the leases are released so another server adopts them on its next round.
 */

/** Default claim batch (jobs per round). */
const CLAIM_BATCH = 256;

/** What the lease system asks of the monitor. */
export interface LeaseHooks {
  /**
   * Jobs now owned here (claimed): step `toStep` — the start-up recovery rules apply — and run an
   * admission pass. A job just submitted here is stepped only when it asked to be (a dependent);
   * a PENDING job's step decides nothing before a pass has (design §6).
   */
  claimed(ids: number[], toStep: number[]): void;
  /** Jobs no longer owned here: stop stepping and watching them. */
  lost(ids: number[]): void;
}

export { hostIdentity };

/** A server id: new at every process start, short enough for a log line (`srv-<host>-<hex>`). */
export function newServerId(): string {
  return `srv-${hostname().slice(0, 32)}-${randomBytes(4).toString('hex')}`;
}

/** The lease system of one monitor (see the module comment). */
export class LeaseSystem {
  /** Jobs this server owns, as of its last round. */
  private readonly owned = new Set<number>();
  /** Servers this one found dead at its start (their process gone from this host). */
  private readonly dead = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  private claimAgain = false;
  /** Jobs submitted here and not yet claimed (claimSoon) → whether to step each once claimed. */
  private readonly fresh = new Map<number, boolean>();
  private stopped = false;

  constructor(
    private readonly res: MonitorResources,
    private readonly store: Store,
    private readonly opts: LeaseOptions,
    private readonly hooks: LeaseHooks,
  ) {}

  /** This server's id. */
  get serverId(): string {
    return this.opts.server.id;
  }

  /** The lease length (ms). */
  get leaseMs(): number {
    return this.opts.leaseMs;
  }

  /** How many jobs this server owns (as of its last round). */
  get jobsOwned(): number {
    return this.owned.size;
  }

  /** Registers the server and takes its first share of jobs (before the start-up scan). */
  async start(): Promise<void> {
    await registerServer(this.store, this.opts.server);
    this.res.log.info({ serverId: this.serverId, host: this.opts.server.host, leaseMs: this.opts.leaseMs }, `server ${this.serverId} registered (lease ${this.opts.leaseMs} ms)`);
    await this.expireDeadNeighbours();
    await this.runRound();
    this.schedule();
  }

  /**
   * A server of this host whose process is gone (a kill -9 and a restart) cannot renew: its
   * leases are expired at once instead of after their length. A pid reused meanwhile only means
   * waiting for the expiry.
   */
  private async expireDeadNeighbours(): Promise<void> {
    const dead = (await hostServers(this.store, this.opts.server.hostId, this.serverId)).filter((s) => !pidExists(s.pid)).map((s) => s.id);
    if (dead.length === 0) return;
    await expireServers(this.store, dead);
    for (const id of dead) this.dead.add(id);
    this.res.log.info({ servers: dead }, `server(s) ${dead.join(', ')} of this host are gone: their leases expired now`);
  }

  /**
   * A job was submitted here: claim it soon, by id (coalesced with a round in flight). Only the
   * server that accepted the submit claims it at once; another server's round takes what its
   * fair share leaves (docs/design.md "Replicas").
   */
  claimSoon(jobId: number, step = false): void {
    if (this.stopped) return;
    this.fresh.set(jobId, step);
    if (this.round) {
      this.claimAgain = true;
      return;
    }
    this.round = this.claim(false).finally(() => (this.round = null));
  }

  /** Stops the rounds and releases every lease (owner null, expired now). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.round?.catch(() => undefined);
    try {
      const ids = await releaseLeases(this.store, this.serverId);
      this.owned.clear();
      this.res.log.info({ serverId: this.serverId, jobs: ids.length }, `server ${this.serverId} released ${ids.length} lease(s)`);
    } catch (err) {
      this.res.log.warn({ err: errMessage(err) }, 'could not release the leases; they expire on their own');
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.runRound().finally(() => this.schedule());
    }, Math.max(50, Math.floor(this.opts.leaseMs / 3)));
    this.timer.unref?.();
  }

  private async runRound(): Promise<void> {
    while (this.round) await this.round.catch(() => undefined);
    this.round = this.renewAndClaim().finally(() => (this.round = null));
    await this.round;
  }

  private async renewAndClaim(): Promise<void> {
    try {
      const { still, takenOver } = await renewLeases(this.store, this.serverId, this.opts.leaseMs, [...this.owned]);
      const kept = new Set(still);
      // Finished or deleted here: just no longer watched. Taken over: worth a warning.
      const gone = [...this.owned].filter((id) => !kept.has(id));
      this.owned.clear();
      for (const id of kept) this.owned.add(id);
      if (takenOver.length) {
        this.res.log.warn({ serverId: this.serverId, jobs: takenOver }, `server ${this.serverId} lost the lease of ${takenOver.length} job(s) (taken over by another server): ${takenOver.join(', ')}; dropping them`);
      }
      if (gone.length) this.hooks.lost(gone);
    } catch (err) {
      this.res.log.warn({ err: errMessage(err) }, 'lease renewal failed; retrying next round');
      return;
    }
    await this.claim(true);
  }

  /**
   * Claims: `all` — every unowned or expired job up to the fair share (a round); else only the
   * jobs submitted here since the last claim (by id: its cost does not grow with the jobs other
   * servers hold). A failed claim leaves its jobs to the next round.
   */
  private async claim(all: boolean): Promise<void> {
    const batch = this.opts.claimBatch ?? CLAIM_BATCH;
    for (let i = 0; i < 10; i++) {
      this.claimAgain = false;
      const fresh = all ? null : new Map(this.fresh);
      const only = fresh ? [...fresh.keys()] : undefined;
      this.fresh.clear();
      all = false;
      if (only?.length === 0) return;
      let got: Claimed[];
      try {
        got = await claimJobs(this.store, this.serverId, this.opts.leaseMs, only ? Math.max(batch, only.length) : batch, only);
      } catch (err) {
        this.res.log.warn({ err: errMessage(err) }, 'lease claim failed; retrying next round');
        return;
      }
      if (got.length) await this.adopt(got, fresh);
      if (!this.claimAgain || this.stopped) return;
    }
  }

  private why(prev: string): string {
    return this.dead.has(prev) ? 'its process is gone' : 'its lease expired';
  }

  /** Takes `got` as owned; `fresh`: they were claimed by id after a submit here (→ whether to step each). */
  private async adopt(got: Claimed[], fresh: Map<number, boolean> | null): Promise<void> {
    for (const c of got) this.owned.add(c.id);
    const taken = got.filter((c) => c.previousOwner !== null && c.previousOwner !== this.serverId);
    if (taken.length) {
      const byOwner = new Map<string, number[]>();
      for (const c of taken) byOwner.set(c.previousOwner!, [...(byOwner.get(c.previousOwner!) ?? []), c.id]);
      for (const [prev, ids] of byOwner) {
        this.res.log.warn({ serverId: this.serverId, from: prev, jobs: ids }, `server ${this.serverId} took over ${ids.length} job(s) from ${prev} (${this.why(prev)}): ${ids.join(', ')}`);
      }
      try {
        await recordServerEvents(
          this.store,
          taken.map((c) => ({ jobId: c.id, to: 'TAKEN_OVER' as const, reason: `server ${this.serverId} took the job over from ${c.previousOwner} (${this.why(c.previousOwner!)}; epoch ${c.epoch})` })),
        );
      } catch (err) {
        this.res.log.warn({ err: errMessage(err) }, "could not record the takeover in the jobs' history");
      }
    }
    const ids = got.map((c) => c.id);
    this.hooks.claimed(ids, fresh ? ids.filter((id) => fresh.get(id)) : ids);
  }
}
