import type { MonitorState } from './state';
import { lineOrder, placesInLine, planAdmission, planAdmissionReads, priorityOf, type AdmissionInput, type AdmissionPlan, type GpuPoolInput, type JobPlace, type QueueLimits, type QueueReads, type QueueSummary, type QueueUse, type WaitingJob } from '../jobs/capacity';
import type { GpuGrant } from '../jobs/gpus';
import { DEFAULT_EXECUTOR, kindsWith } from '../jobs/executor-kinds';
import type { TaskStatus } from '../jobs/status';
import type { LaunchSystem } from './launch';
import type { ReapSystem } from './reap';
import { noteError, now, type MonitorResources } from './resources';
import type { JobEntry } from './scheduler';
import type { PendingReasonRow, StoreEvent, WaitingRow } from './store-view';
import type { JobRow, Next } from './types';
import { taskViews, type Writes } from './writes';
import { graphState } from '../jobs/task-graph';

/**
 * Admission (docs/design.md §6): a pass (lib/jobs/capacity) starts PENDING jobs in line order
 * (priority, then submission) while their CPUs and GPUs fit — naming the GPU devices each gets on
 * an executor that has them (local) — and ends FAILED_NO_RESOURCE the ones that never can or waited
 * past the start timeout. A pass decides; the job's next step acts on the verdict, once (rule 5:
 * a verdict belongs to the first iteration that sees the job PENDING). Passes run one at a
 * time, after submits, ends, reaps and ticks; three shortcuts skip passes that would decide
 * nothing: a new job behind a blocked queue, freed CPUs when nobody waits, and (alone with the
 * database) a tick when nobody waits (tick()).
 */

/** Waiting jobs a pass reads per query from the head of an executor's queue. */
const ADMISSION_PAGE = 64;

/** Every how many ticks a server alone with its database runs a pass that would decide nothing (see tick). */
const IDLE_TICK_PASS_EVERY = 10;

/** How far a pass read an executor's line without a gap: through this job (line order), or all of it. */
type ReadThrough = Pick<WaitingJob, 'id' | 'priority'> | 'all';

/** CPUs held per executor and per operator queue, and the summary of each executor's line, as a pass reads them. */
interface QueueReadout {
  used: Record<string, number>;
  queueUsed: Record<string, QueueUse>;
  queues: QueueSummary[];
  waitingCount: number;
}

/** Admission passes and their verdicts (see the module comment). */
export class AdmissionSystem {
  /** Jobs the pass admitted, consumed by their next step, each with the GPU devices it was granted (null: none). */
  private readonly admitted = new Map<number, GpuGrant | null>();
  /** Host-shared admission: per admitted job, what its step calls once its STARTING write is done. */
  private readonly written = new Map<number, () => void>();
  /** Verdicts "no resource" (job id → reason), consumed by the job's next step. */
  private readonly noResource = new Map<number, string>();
  private admitting: Promise<void> | null = null;
  private again = false;
  /** 'created' events that came while a pass ran, judged when it ends. */
  private readonly createdDuring: StoreEvent[] = [];
  private soon: NodeJS.Immediate | null = null;
  /** Executors whose line the last completed pass found blocked → their CPU budget and the blocking job's priority. */
  private blockedQueues: Map<string, { total: number; priority: number }> | null = null;
  /** The queues' limits as the last pass read them (their own start timeouts decide the created-job shortcut). */
  private lastLimits: Record<string, QueueLimits> = {};
  /**
   * True when the last completed pass left no job waiting and no job was created since: freed
   * CPUs (a job ending, a reap done) then have nobody to go to, and their pass is skipped (the
   * tick's pass still runs; it also sees jobs another server created). Keeps the end of a job
   * free of a pass whose queries, on the embedded database, share this thread with the job's
   * streams announcing the end.
   */
  private noneWaiting = false;
  /** 'created' events seen (noneWaiting holds only if none came during the pass). */
  private createdSeen = 0;
  private waitingNow = 0;
  /** Jobs whose stored reason the last pass wrote or found (its waiting jobs); null: unknown (before the first pass). */
  private reasoned: Set<number> | null = null;
  private capacityNow: MonitorState['capacity'];
  /** Ticks seen (tick()), and passes begun: for tests and diagnostics (Monitor.admissionStats). */
  ticks = 0;
  passesRun = 0;

  constructor(
    private readonly res: MonitorResources,
    private readonly writes: Writes,
    private readonly launch: LaunchSystem,
    private readonly reap: ReapSystem,
  ) {
    this.capacityNow = { check: res.settings.capacityCheck, used: 0, total: 0, byExecutor: {} };
  }

  /** PENDING jobs left waiting by the last pass, plus those created behind a blocked queue since (MonitorState.jobsWaiting). */
  get jobsWaiting(): number {
    return this.waitingNow;
  }

  /** The CPU budget as the last pass saw it (MonitorState.capacity). */
  get capacity(): MonitorState['capacity'] {
    return this.capacityNow;
  }

  /** Runs admission passes until no new request came in meanwhile (one at a time). */
  run(): Promise<void> {
    if (this.admitting) {
      this.again = true;
      return this.admitting;
    }
    const loop = async () => {
      do {
        this.again = false;
        try {
          await this.pass();
        } catch (err) {
          noteError(this.res, err, 'admission');
          break; // the next tick retries
        } finally {
          // Jobs created during the pass: another pass only for one that may not simply wait.
          const later = this.createdDuring.splice(0);
          if (later.some((e) => !this.behindBlock(e))) this.again = true;
        }
      } while (this.again && !this.res.life.stopped);
    };
    this.admitting = loop().finally(() => (this.admitting = null));
    return this.admitting;
  }

  /**
   * The reconcile tick's pass. A server alone with its database (no host lock: PGlite, where
   * every write goes through this process's bus) skips it while nobody waits and no job was
   * created since the last pass — it would read the lines and decide nothing, every second — but
   * runs it every IDLE_TICK_PASS_EVERY ticks all the same, as a safety net. With several servers
   * another's jobs may wait: every tick runs one.
   */
  tick(): Promise<void> {
    this.ticks++;
    const idle = this.noneWaiting && !this.admitting && !this.soon && this.res.store.host === null;
    return idle && this.ticks % IDLE_TICK_PASS_EVERY !== 0 ? Promise.resolve() : this.run();
  }

  /** Runs a pass soon; `freedOnly` (CPUs were freed): not when nobody waits. */
  schedule(freedOnly = false): void {
    if (this.res.life.stopped || this.soon || (freedOnly && this.noneWaiting)) return;
    this.soon = setImmediate(() => {
      this.soon = null;
      void this.run();
    });
  }

  /**
   * A job was created: a pass soon, unless it would decide nothing (waitsInBlockedQueue). While a
   * pass runs, the job is judged when it ends, against what that pass found (behindBlock): under
   * a stream of submits, passes would otherwise follow each other for as long as the stream lasts.
   */
  created(e: StoreEvent): void {
    this.createdSeen++;
    this.noneWaiting = false;
    if (this.waitsInBlockedQueue(e)) {
      this.waitingNow++;
      return;
    }
    if (this.admitting && !this.soon && e.job && !this.res.life.stopped) {
      this.createdDuring.push(e);
      return;
    }
    this.schedule();
  }

  /**
   * True when a pass for this new job would decide nothing: the last pass (none since, none
   * scheduled or running) found the job's executor line blocked by a job that does not fit
   * (strict priority, no backfill) whose priority is at least the new job's (so the new one is
   * behind it), the job is not too big for the executor, and it cannot have waited past the
   * start timeout. Anything that frees CPUs or reorders the line runs a pass of its own. The
   * new job's reason is then written by the next pass that reads it.
   */
  private waitsInBlockedQueue(e: StoreEvent): boolean {
    return !this.admitting && !this.soon && this.behindBlock(e);
  }

  /**
   * True when the last completed pass found the new job's line blocked by a job of at least its
   * priority, and the job is not too big (in CPUs or nodes) and cannot be past the start timeout:
   * it can only wait (see waitsInBlockedQueue).
   */
  private behindBlock(e: StoreEvent): boolean {
    const b = e.job ? this.blockedQueues?.get(e.job.executor) : undefined;
    if (!e.job || b === undefined) return false;
    // A start timeout of 0 (the server's or a queue's) ends a job that cannot start at once: its pass decides.
    const timeouts = [this.res.settings.startTimeoutMs, ...Object.values(this.lastLimits).map((l) => l.startTimeoutMs ?? null)];
    if (timeouts.some((t) => t !== null && t <= 0)) return false;
    // A multi-node job may be too big in nodes, a GPU job in GPUs: its pass decides.
    return e.job.cpus <= b.total && (e.job.nodes ?? 1) <= 1 && (e.job.gpus ?? 0) === 0 && priorityOf(e.job) <= b.priority;
  }

  /** The pass running now (null when none) and whether one is scheduled. */
  pending(): { running: Promise<void> | null; scheduled: boolean } {
    return { running: this.admitting, scheduled: this.soon !== null };
  }

  /** Cancels a scheduled pass (the monitor stops). */
  cancelScheduled(): void {
    if (this.soon) clearImmediate(this.soon);
  }

  /** True while the job has a verdict its next step has not consumed. */
  holdsVerdict(jobId: number): boolean {
    return this.admitted.has(jobId) || this.noResource.has(jobId);
  }

  /** Drops the job's verdicts (it is gone or terminal). */
  forget(jobId: number): void {
    this.admitted.delete(jobId);
    this.noResource.delete(jobId);
  }

  /** A PENDING job's step: acts on its verdict (no resource, or admitted), else waits. */
  async advancePending(job: JobRow, e: JobEntry): Promise<Next> {
    const verdict = this.noResource.get(job.id);
    // Rule 5: a verdict is used by this iteration only; if the write loses, it is gone.
    this.noResource.delete(job.id);
    if (verdict !== undefined) {
      const d = this.writes.decide(job);
      for (const t of job.tasks) {
        if (t.status !== 'PENDING') continue;
        const to: TaskStatus = t.index === job.tasks[0].index ? 'FAILED_NO_RESOURCE' : 'CANCELLED';
        d.task(t, to, to === 'CANCELLED' ? 'the job could not start' : verdict, { endedAt: now(this.res) });
      }
      return d.deriveJob(verdict).write('no-resource');
    }
    if (this.admitted.has(job.id)) {
      const grant = this.admitted.get(job.id) ?? null;
      this.admitted.delete(job.id);
      // The first task that may start (a pipeline's first; in a group or DAG the others that may
      // start follow in the job's next iterations, admitted with it: its CPUs cover them all).
      const first = graphState(taskViews(job)).ready[0];
      const cur = job.tasks.find((t) => t.index === first);
      if (!cur) return this.writes.finish(job, 'finish');
      if (cur.status !== 'PENDING') throw new Error(`job ${job.id} is PENDING but task ${cur.index} is ${cur.status}`);
      // The grant is written with the job's move to STARTING (Job.gpuGrant): the next pass reads it back.
      return this.launch.launchTask(job, cur, e, 'admit', () => this.noteWritten(job.id), grant ?? undefined);
    }
    return 'idle';
  }

  /**
   * One pass: read the queues, plan (lib/jobs/capacity), note the verdicts, kick their jobs.
   * With several servers on the host (leases on), the whole pass — its reads and the steps of
   * the jobs it admits, up to their STARTING write — runs under the host's admission lock, so
   * the next server's pass counts what this one started (docs/design.md "Replicas").
   */
  private async pass(): Promise<void> {
    if (this.res.life.stopped) return;
    this.passesRun++;
    const host = this.res.store.host;
    if (!host) return (await this.passUnlocked(false)).steps;
    const { steps } = await host.lock(async () => {
      const r = await this.passUnlocked(true);
      // Each admitted job's STARTING write is done, or its step ended without using the
      // verdict (the job is another server's): such a verdict must not start it later, outside the lock.
      await Promise.all(r.admitted);
      this.admitted.clear();
      this.written.clear();
      // Wrapped: an async callback answering a promise would wait for it, under the lock.
      return { steps: r.steps };
    });
    // The rest of the steps (the launches themselves) need no lock.
    await steps;
  }

  /** Called by an admitted job's step once its STARTING write is done (applied or lost). */
  private noteWritten(jobId: number): void {
    this.written.get(jobId)?.();
    this.written.delete(jobId);
  }

  /**
   * The pass itself. Answers its steps (all kicked; awaited by the caller) and, when `shared`,
   * per admitted job a promise of its STARTING write done or its step ended.
   */
  private async passUnlocked(shared: boolean): Promise<{ steps: Promise<void>; admitted: Array<Promise<void>> }> {
    const none: { steps: Promise<void>; admitted: Array<Promise<void>> } = { steps: Promise.resolve(), admitted: [] };
    if (this.res.life.stopped) return none;
    // Verdicts of the previous pass were consumed (or their steps failed): decide afresh.
    this.admitted.clear();
    this.noResource.clear();
    // Known again only when this pass completes (a failed pass leaves it unknown).
    this.blockedQueues = null;
    this.noneWaiting = false;
    const createdBefore = this.createdSeen;
    const { used, queueUsed, queues, waitingCount } = await this.readQueues();
    const queueLimits = await this.res.store.queueLimits();
    this.lastLimits = queueLimits;
    const { quotas: userQuotas, used: userUsed, gpusUsed: userGpusUsed } = await this.res.store.userQuotas(this.res.settings.quotas);
    const { total, totalNodes } = this.totals(queues, used);
    const gpuPools = await this.gpuPools(queues, used);
    const common = { used, total, totalNodes, queueLimits, queueUsed, userQuotas, userUsed, userGpusUsed, gpuPools, nowMs: this.res.clock.now(), startTimeoutMs: this.res.settings.startTimeoutMs, enabled: this.res.settings.capacityCheck };
    // Only the waiting jobs admission can decide on are read (planAdmissionReads) — not every
    // PENDING job on every pass (a pass runs after each submit).
    const waiting = new Map<number, WaitingRow>();
    const through: Record<string, ReadThrough> = {};
    // Line after line in plan order: each line's reads depend on the lines before (lib/jobs/capacity planOrder).
    for (const queue of [...queues].sort((a, b) => (a.executor < b.executor ? -1 : a.executor > b.executor ? 1 : 0))) {
      const reads = planAdmissionReads({ ...common, queue });
      if (!reads) continue;
      const read = await this.readWaiting(queue.executor, reads, common, [...waiting.values()]);
      for (const j of read.rows) waiting.set(j.id, j);
      through[queue.executor] = read.through;
    }
    const plan = planAdmission({ ...common, waiting: [...waiting.values()] });
    this.noteCapacity(plan, total);
    // The jobs not read all wait.
    this.waitingNow = Math.max(0, waitingCount - plan.admit.length - plan.noResource.length);
    // Admitted and too-big jobs leave PENDING through this pass's steps: nobody is left waiting.
    this.noneWaiting = this.waitingNow === 0 && this.createdSeen === createdBefore;
    this.blockedQueues = this.blocked(plan, total);
    let out = none;
    if (plan.admit.length > 0 || plan.noResource.length > 0) {
      for (const n of plan.noResource) this.noResource.set(n.id, n.reason);
      for (const id of plan.admit) this.admitted.set(id, plan.grants[id] ?? null);
      const written = shared ? plan.admit.map((id) => new Promise<void>((r) => this.written.set(id, r))) : [];
      const kicks = [...plan.admit, ...plan.noResource.map((n) => n.id)].map((id) => this.res.scheduler.kick(id));
      out = { steps: Promise.all(kicks).then(() => undefined), admitted: written.map((w, i) => Promise.race([w, kicks[i]])) };
      if (!shared) await out.steps;
    }
    await this.writeReasons(plan, waiting, through);
    return out;
  }

  /**
   * Stores why each job the pass read still waits (Job.pendingReason) and its place in line
   * (Job.pendingPlace, lib/jobs/capacity placesInLine: among the jobs still waiting, an overall
   * position only as far as the pass read the line without a gap), only where either changed (no
   * write for what is already stored: a job's place changes when a job ahead of it leaves the
   * line or one comes in ahead of it); clears both of a job the last pass read and this one did
   * not (its place is unknown now: behind the first page). The first pass after a start clears
   * every other reason once. A failed write is noted; the next pass starts afresh.
   */
  private async writeReasons(plan: AdmissionPlan, waiting: Map<number, WaitingRow>, through: Record<string, ReadThrough>): Promise<void> {
    const rows: PendingReasonRow[] = [];
    const now = new Set<number>();
    const places = placesInLine(
      plan.waiting.map((w) => waiting.get(w.id)).filter((j): j is WaitingRow => j !== undefined),
      through,
    );
    for (const w of plan.waiting) {
      now.add(w.id);
      const place = places.get(w.id) ?? null;
      const stored = waiting.get(w.id);
      if (stored?.pendingReason !== w.reason || !samePlace(stored?.pendingPlace, place)) rows.push({ id: w.id, reason: w.reason, place });
    }
    const leaving = new Set([...plan.admit, ...plan.noResource.map((n) => n.id)]);
    for (const id of this.reasoned ?? []) if (!now.has(id) && !leaving.has(id)) rows.push({ id, reason: null, place: null });
    const first = this.reasoned === null;
    this.reasoned = null;
    try {
      await this.res.store.setPendingReasons(rows);
      if (first) await this.res.store.clearPendingReasons([...now]);
      this.reasoned = now;
    } catch (err) {
      noteError(this.res, err, 'admission reasons');
    }
  }

  /**
   * One aggregate: CPUs held per executor and per queue, and each executor's line summarized
   * (its groups per queue merged); plus the CPUs of jobs still being reaped.
   */
  private async readQueues(): Promise<QueueReadout> {
    const used: Record<string, number> = {};
    const queueUsed: Record<string, QueueUse> = {};
    const lines = new Map<string, QueueSummary>();
    let waitingCount = 0;
    for (const g of await this.res.store.queueGroups()) {
      if (g.status !== 'PENDING') {
        used[g.executor] = (used[g.executor] ?? 0) + g.sumCpus;
        const q = (queueUsed[g.queue] ??= { running: 0, cpus: 0, gpus: 0 });
        q.running += g.count;
        q.cpus += g.sumCpus;
        q.gpus = (q.gpus ?? 0) + g.sumGpus;
        continue;
      }
      waitingCount += g.count;
      const l = lines.get(g.executor);
      if (!l) {
        lines.set(g.executor, { executor: g.executor, count: g.count, minCpus: g.minCpus, maxCpus: g.maxCpus, maxNodes: g.maxNodes, oldestSubmittedAtMs: g.oldestSubmittedAtMs });
        continue;
      }
      l.count += g.count;
      l.minCpus = Math.min(l.minCpus, g.minCpus);
      l.maxCpus = Math.max(l.maxCpus, g.maxCpus);
      l.maxNodes = Math.max(l.maxNodes ?? 1, g.maxNodes);
      l.oldestSubmittedAtMs = Math.min(l.oldestSubmittedAtMs, g.oldestSubmittedAtMs);
    }
    // Several servers on the host: a host executor's CPUs in use are those of the host's jobs
    // (the host kinds' always, lib/jobs/executor-kinds.ts `hostCpus`: another server's may run).
    const host = this.res.store.host;
    if (host) {
      const shared = Object.keys(used).concat([...lines.keys()], kindsWith((c) => c.hostCpus)).filter((n, i, all) => all.indexOf(n) === i && this.hostExecutor(n));
      const held = await host.cpus(shared);
      for (const n of shared) used[n] = held[n] ?? 0;
    }
    // A job whose leftovers are still being stopped keeps its CPUs until they are gone.
    const reaping = this.reap.jobIds();
    if (reaping.length > 0 && this.res.settings.capacityCheck) {
      for (const r of await this.res.store.inactiveCpus(reaping)) used[r.executor] = (used[r.executor] ?? 0) + r.cpus;
    }
    return { used, queueUsed, queues: [...lines.values()], waitingCount };
  }

  /**
   * Each known executor's CPUs (an unknown executor's jobs wait: see planAdmission), and the
   * nodes of those that run multi-node jobs.
   */
  private totals(queues: QueueSummary[], used: Record<string, number>): { total: Record<string, number>; totalNodes: Record<string, number> } {
    const names = new Set<string>([...queues.map((q) => q.executor), ...Object.keys(used), DEFAULT_EXECUTOR]);
    const total: Record<string, number> = {};
    const totalNodes: Record<string, number> = {};
    for (const n of names) {
      try {
        const cap = this.res.executor(n).capacity();
        total[n] = cap.cpus;
        if (cap.nodes !== undefined) totalNodes[n] = cap.nodes;
      } catch {
        /* unknown executor */
      }
    }
    return { total, totalNodes };
  }

  /**
   * The GPU devices of each executor that has some of its own (lib/jobs/executor-kinds.ts `gpus:
   * 'host'`: capacity().gpus), with the grants its
   * jobs hold — active ones, and those whose leftovers are still being stopped — and the devices
   * processes outside jobdeck hold (Executor.gpusHeld). A pass reads the grants back from the
   * database every time, so a restarted server (even after kill -9) never grants a held device.
   */
  private async gpuPools(queues: QueueSummary[], used: Record<string, number>): Promise<Record<string, GpuPoolInput>> {
    const out: Record<string, GpuPoolInput> = {};
    const names = new Set<string>([...queues.map((q) => q.executor), ...Object.keys(used), ...kindsWith((c) => c.gpus === 'host')]);
    for (const n of names) {
      let ex;
      try {
        ex = this.res.executor(n);
      } catch {
        continue; // unknown executor
      }
      const devices = ex.capacity().gpus;
      if (!devices || devices.length === 0) continue;
      const [granted, held] = await Promise.all([this.res.store.gpuGrants(n, this.reap.jobIds()), ex.gpusHeld ? ex.gpusHeld() : Promise.resolve([])]);
      out[n] = { devices, granted, held };
    }
    return out;
  }

  /** True when the executor's CPUs are the host's (local), false for others and unknown ones. */
  private hostExecutor(name: string): boolean {
    try {
      return this.res.executor(name).capacity().host === true;
    } catch {
      return false;
    }
  }

  private noteCapacity(plan: AdmissionPlan, total: Record<string, number>): void {
    const byExecutor: Record<string, { used: number; total: number }> = {};
    for (const n of Object.keys(total)) byExecutor[n] = { used: plan.used[n] ?? 0, total: total[n] };
    this.capacityNow = {
      check: this.res.settings.capacityCheck,
      used: Object.values(byExecutor).reduce((a, b) => a + b.used, 0),
      total: Object.values(byExecutor).reduce((a, b) => a + b.total, 0),
      byExecutor,
    };
  }

  /** The executor lines the plan left blocked → their CPUs and the blocking job's priority (check on only). */
  private blocked(plan: AdmissionPlan, total: Record<string, number>): Map<string, { total: number; priority: number }> {
    const blocked = new Map<string, { total: number; priority: number }>();
    if (!this.res.settings.capacityCheck) return blocked;
    for (const ex of plan.blocked) if (total[ex] !== undefined) blocked.set(ex, { total: total[ex], priority: plan.blockedPriority[ex] });
    return blocked;
  }

  /**
   * The waiting jobs of one executor that `reads` names (lib/jobs/capacity QueueReads), in line
   * order, deduplicated: the first page of the line, then, when `reads.head`, further pages of
   * ADMISSION_PAGE until planAdmission() over `before` (the earlier lines' rows) and the pages
   * finds the line blocked (or it ends). The jobs of queues that plan finds full are skipped from
   * the next page on; one page of each is read for the reasons. `through`: how far the rows hold
   * every waiting job of the line — the nearest of where the pages of the other queues and the
   * page of each skipped queue end (a page shorter than asked: that part was read to its end).
   */
  private async readWaiting(executor: string, reads: QueueReads, common: Omit<AdmissionInput, 'waiting'>, before: WaitingJob[]): Promise<{ rows: WaitingRow[]; through: ReadThrough }> {
    const store = this.res.store;
    if (reads.all) return { rows: await store.waitingAll(executor), through: 'all' };
    const out = new Map<number, WaitingRow>();
    const skip = new Set(planAdmission({ ...common, waiting: before }).fullQueues);
    const head: WaitingRow[] = [];
    const ends: ReadThrough[] = [];
    for (;;) {
      const last = head.length ? head[head.length - 1] : null;
      const page = await store.waitingPage(executor, { after: last && { id: last.id, priority: priorityOf(last) }, take: ADMISSION_PAGE, skipQueues: [...skip] });
      head.push(...page);
      const done = page.length < ADMISSION_PAGE;
      if (done || !reads.head) {
        ends.push(done ? 'all' : head[head.length - 1]);
        break;
      }
      const plan = planAdmission({ ...common, waiting: [...before, ...head] });
      if (plan.blocked.includes(executor)) {
        ends.push(head[head.length - 1]);
        break;
      }
      for (const q of plan.fullQueues) skip.add(q);
    }
    for (const j of head) out.set(j.id, j);
    for (const queue of skip) {
      const page = await store.waitingPage(executor, { after: null, take: ADMISSION_PAGE, queue });
      for (const j of page) out.set(j.id, j);
      ends.push(page.length < ADMISSION_PAGE ? 'all' : page[page.length - 1]);
    }
    for (const r of await store.waitingMatching(executor, { cpusAbove: reads.cpusAbove, nodesAbove: reads.nodesAbove ?? null, submittedAtOrBefore: reads.submittedAtOrBefore })) out.set(r.id, r);
    const through = ends.reduce<ReadThrough>((a, b) => (a === 'all' ? b : b === 'all' || lineOrder(a, b) <= 0 ? a : b), 'all');
    return { rows: [...out.values()], through };
  }
}

/** True when a stored Job.pendingPlace (JSON) says what `place` says. */
function samePlace(stored: unknown, place: JobPlace | null): boolean {
  if (stored === null || stored === undefined) return place === null;
  if (place === null) return false;
  const s = stored as Partial<JobPlace>;
  const a = s.ahead ?? null;
  const b = place.ahead;
  return (s.position ?? null) === place.position && s.queuePosition === place.queuePosition && (a === null || b === null ? a === b : a.jobs === b.jobs && a.cpus === b.cpus && a.gpus === b.gpus);
}
