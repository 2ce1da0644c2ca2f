/**
 * What the API shows of a job: the one place that maps the store's rows (lib/store list.ts,
 * detail.ts) to the shapes of lib/api/types.ts (JobSummary, JobDetail…), with secrets masked.
 * The REST routes, the CLI (through the API), the dashboard and the WebSocket hub all show jobs
 * through these functions, so a job looks the same everywhere.
 */
import { stat } from 'node:fs/promises';
import type { Attempt, JobEvent, Task } from '../generated/prisma/client';
import { originOf } from '../jobs/origin';
import { mayChangeJob, type Actor } from '../jobs/roles';
import { mergedLabels, taskLabels, type Resources, type TaskSpec } from '../jobs/spec';
import { usageFigures, type UsagePoint } from '../jobs/usage';
import { logDiskBytes } from '../logs/source';
import { groupSummaries } from './group-views';
import { dependenciesOf, jobListRows, jobTree, listJobRows, tokenRow, usageSeriesOf, userNames, type JobListRow, type JobSummaryRow, type ListJobsOptions, type StoreScope } from '../store';
import { encodeCursor, encodeNameCursor } from './cursor';
import { MASKED_VALUE } from '../auth/secrets';
import { readManifest } from '../control';
import { attemptLogFiles } from '../monitor/retention';
import { maskEnvs, maskSpecYaml } from './mask';
import type { AttemptUsageView, AttemptView, JobDetail, JobEventView, JobList, JobPlace, JobSummary, TaskSummary, TaskView } from './types';

// ─── reads, as views ─────────────────────────────────────────────────────────────────────────

/**
 * One page of jobs in `opts.sort` order (default newest first), with their task summaries
 * (lib/store listJobRows: keyset pages, three queries). `nextCursor` is null on the last page. `now` is
 * "now" for running durations (default the clock).
 */
export async function listJobs(store: StoreScope, opts: ListJobsOptions & { now?: Date } = {}): Promise<JobList> {
  const { jobs, more } = await listJobRows(store, opts);
  const now = opts.now ?? new Date();
  const last = jobs[jobs.length - 1]?.job;
  const nextCursor = more && last ? (opts.sort === 'name' ? encodeNameCursor(last.id, last.name) : encodeCursor(last.id)) : null;
  const leads = opts.foldGroups ? jobs.flatMap((r) => (r.job.groupLead && r.job.groupId !== null ? [r.job.groupId] : [])) : [];
  return { jobs: jobs.map((r) => summaryOf(r, now)), nextCursor, ...(opts.foldGroups ? { groups: await groupSummaries(store, leads) } : {}) };
}

/** JobSummaries of the given ids (missing ids are skipped), in the order of `ids`. */
export async function getJobSummaries(store: StoreScope, ids: readonly number[], now: Date = new Date()): Promise<JobSummary[]> {
  return (await jobListRows(store, ids)).map((r) => summaryOf(r, now));
}

/** The JobSummary of one job, or null when it does not exist (e.g. deleted). */
export async function getJobSummary(store: StoreScope, id: number, now: Date = new Date()): Promise<JobSummary | null> {
  return (await getJobSummaries(store, [id], now))[0] ?? null;
}

/**
 * The whole story of one job for its page: tasks with every attempt (log sizes read from disk),
 * every event in order, the masked YAML. Null when the job does not exist.
 */
export async function getJobDetail(store: StoreScope, id: number, now: Date = new Date(), viewer?: Actor): Promise<JobDetail | null> {
  const job = await jobTree(store, id);
  if (!job) return null;
  const series = await usageSeriesOf(store, job.tasks.flatMap((t) => t.attempts.filter((a) => a.cpuMs !== null).map((a) => a.id)));
  const tasks = await Promise.all(job.tasks.map((t) => toTaskView(t, series, now)));
  const [names, token] = await Promise.all([userNames(store, [job.userId]), job.tokenId === null ? null : tokenRow(store, job.tokenId)]);
  const owner = job.userId === null ? null : (names.get(job.userId) ?? null);
  const deps = (await dependenciesOf(store, [job.id])).get(job.id) ?? [];
  return {
    ...toJobSummary(job, tasks, now, owner),
    dependsOn: deps.map((d) => ({ jobId: d.onJobId, after: d.after as 'ok' | 'failed' | 'any' })),
    events: job.events.map(toJobEventView),
    specYaml: maskSpecYaml(job.specYaml),
    launch: launchView(job.launch),
    origin: originOf(job.origin),
    metadata: job.metadata ?? null,
    executor: job.executor,
    // Jobs from before warnings were stored have none (SQL NULL).
    warnings: Array.isArray(job.warnings) ? (job.warnings as unknown as JobDetail['warnings']) : [],
    viaToken: token?.prefix ?? null,
    // The upload's hash is for who may use it (a re-run): docs/design.md §16.
    upload: uploadOf(job.launch, !viewer || mayChangeJob(viewer, job.userId)),
    logsRemovedAt: job.logsRemovedAt?.toISOString() ?? null,
    logBytesTotal: await logUsage(job.tasks.flatMap((t) => t.attempts.map((a) => a.logPath))),
  };
}

/** The manifest of the folder uploaded with a job (Job.launch.workdirUpload), or null; its hash null unless `withHash`. */
function uploadOf(launch: unknown, withHash: boolean): JobDetail['upload'] {
  const hash = launch && typeof launch === 'object' ? (launch as { workdirUpload?: unknown }).workdirUpload : undefined;
  const m = typeof hash === 'string' ? readManifest(hash) : null;
  return m && !withHash ? { ...m, hash: null } : m;
}

/** Every value of a secrets map replaced by MASKED_VALUE (names kept, sorted as given). */
function maskAll(m: unknown): Record<string, string> {
  if (!m || typeof m !== 'object' || Array.isArray(m)) return {};
  return Object.fromEntries(Object.keys(m).map((k) => [k, MASKED_VALUE]));
}

/** JobDetail.launch of a stored Job.launch (lib/control/submit.ts launchOf): envs masked, secrets always (names only). */
function launchView(json: unknown): JobDetail['launch'] {
  const l = (json && typeof json === 'object' ? json : {}) as { name?: unknown; envs?: unknown; secrets?: unknown };
  const envs = l.envs && typeof l.envs === 'object' && !Array.isArray(l.envs) ? (l.envs as Record<string, string>) : {};
  return { name: typeof l.name === 'string' ? l.name : null, envs: { ...maskEnvs(envs), ...maskAll(l.secrets) } };
}

function summaryOf(r: JobListRow, now: Date): JobSummary {
  return toJobSummary(
    r.job,
    r.tasks.map((t) => toTaskSummary(t.task, t.attempts, t.nodes)),
    now,
    r.owner,
  );
}

// ─── mapping ───────────────────────────────────────────────────────────────────────────────

/** The display fields of a Task row's `spec` (a TaskSpec as lib/control/submit.ts stores it). */
function taskSpecView(json: unknown): {
  setup: string | null;
  run: string | null;
  envs: Record<string, string>;
  workdir: string | null;
  resources: Omit<Resources, 'other' | 'alternative'> & { alternative: NonNullable<Resources['alternative']> | null };
  maxRestarts: number;
  recoverOnExitCodes: number[];
} {
  const t = (json ?? {}) as Partial<TaskSpec>;
  const r = t.resources;
  return {
    setup: t.setup ?? null,
    run: t.run ?? null,
    // Secrets are shown among the envs, always masked.
    envs: { ...maskEnvs(t.envs ?? {}), ...maskAll(t.secrets) },
    workdir: t.workdir ?? null,
    resources: { cpus: r?.cpus ?? 1, cpusAtLeast: r?.cpusAtLeast ?? false, memoryGb: r?.memoryGb ?? null, memoryAtLeast: r?.memoryAtLeast ?? false, alternative: r?.alternative ?? null },
    maxRestarts: t.jobRecovery?.maxRestartsOnErrors ?? 0,
    recoverOnExitCodes: t.jobRecovery?.recoverOnExitCodes ?? [],
  };
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);
const span = (from: Date, to: Date): number => Math.max(0, to.getTime() - from.getTime());

/**
 * Maps one Task row, its attempt count and its latest attempt's nodes (Attempt.nodes) to a
 * TaskSummary.
 */
export function toTaskSummary(t: Task, attempts: number, latestNodes: unknown = null): TaskSummary {
  return {
    index: t.index,
    name: t.name,
    status: t.status,
    attempts,
    restarts: t.restarts,
    maxRestarts: taskSpecView(t.spec).maxRestarts,
    exitCodeRestarts: t.exitCodeRestarts,
    recoveries: t.recoveries,
    startedAt: iso(t.startedAt),
    endedAt: iso(t.endedAt),
    nodeNames: nodeNamesOf(latestNodes) ?? [],
    ...nodesOf(t.spec),
  };
}

/** Attempt.nodes as stored: a list of host names, or null when none is recorded. */
function nodeNamesOf(v: unknown): string[] | null {
  return Array.isArray(v) ? v.filter((n): n is string => typeof n === 'string') : null;
}

/** `{ nodes }` of a multi-node task's stored spec (numNodes > 1), else nothing. */
function nodesOf(spec: unknown): { nodes?: number } {
  const n = Number((spec as Partial<TaskSpec> | null)?.numNodes);
  return Number.isInteger(n) && n > 1 ? { nodes: n } : {};
}

/**
 * Maps a Job row and its task summaries (pipeline order) to a JobSummary. Durations run to
 * `now` while the job has not ended (SkyPilot's TOT. DURATION and JOB DURATION).
 */
export function toJobSummary<T extends TaskSummary>(job: JobSummaryRow, tasks: T[], now: Date = new Date(), owner: string | null = null): Omit<JobSummary, 'tasks'> & { tasks: T[] } {
  const end = job.endedAt ?? now;
  return {
    id: job.id,
    name: job.name,
    status: job.status,
    statusReason: job.statusReason,
    submissionId: job.submissionId,
    submittedAt: job.submittedAt.toISOString(),
    startedAt: iso(job.startedAt),
    endedAt: iso(job.endedAt),
    totalDurationMs: span(job.submittedAt, end),
    jobDurationMs: job.startedAt ? span(job.startedAt, end) : null,
    taskCount: job.taskCount,
    currentTask: job.currentTask,
    tasksSucceeded: tasks.filter((t) => t.status === 'SUCCEEDED').length,
    restartCount: job.restartCount,
    exitCodeRestartCount: job.exitCodeRestartCount,
    recoveryCount: job.recoveryCount,
    labels: mergedLabels(job.labels),
    cancelRequested: job.cancelRequestedAt !== null,
    priority: job.priority,
    queue: job.queue,
    owner,
    // PENDING: admission's reason; STARTING / RUNNING: the executor's scheduler's (lib/monitor/held.ts).
    pendingReason: job.status === 'PENDING' || job.status === 'STARTING' || job.status === 'RUNNING' ? job.pendingReason : null,
    place: job.status === 'PENDING' ? placeOf(job.pendingPlace) : null,
    nextAttemptAt: job.status === 'RUNNING' || job.status === 'RECOVERING' ? iso(job.nextAttemptAt) : null,
    group: job.groupId !== null && job.groupIndex !== null ? { id: job.groupId, index: job.groupIndex, lead: job.groupLead } : null,
    scheduleId: job.scheduleId,
    tasks,
  };
}

/** Job.pendingPlace as the API shows it (lib/jobs/capacity JobPlace), or null when none or malformed. */
function placeOf(json: unknown): JobPlace | null {
  if (!json || typeof json !== 'object') return null;
  const p = json as Partial<JobPlace>;
  if (!Number.isInteger(p.queuePosition)) return null;
  const a = p.ahead;
  const ahead = a && typeof a === 'object' && Number.isInteger(a.jobs) ? { jobs: a.jobs, cpus: Number(a.cpus) || 0, gpus: Number(a.gpus) || 0 } : null;
  return { position: Number.isInteger(p.position) ? (p.position as number) : null, queuePosition: p.queuePosition as number, ahead: ahead && Number.isInteger(p.position) ? ahead : null };
}

/** Size of a file in bytes; 0 when the path is null or the file does not exist (yet). */
/**
 * Bytes of every file of these attempts' logs now: each log, its rank logs and time indexes (the
 * files the retention policy removes with it: lib/monitor/retention.ts attemptLogFiles).
 */
async function logUsage(logPaths: ReadonlyArray<string | null>): Promise<number> {
  let total = 0;
  for (const p of logPaths) {
    if (!p) continue;
    for (const f of await attemptLogFiles(p)) total += await fileSize(f);
  }
  return total;
}

async function fileSize(p: string | null): Promise<number> {
  if (!p) return 0;
  try {
    return (await stat(p)).size;
  } catch {
    return 0;
  }
}

/** An attempt's AttemptUsageView from its row, its series and its task's request; null: nothing recorded. */
export function toUsageView(a: Attempt, series: UsagePoint[] | undefined, requested: { cpus: number; memoryGb: number | null }, now: Date): AttemptUsageView | null {
  const memoryBytes = requested.memoryGb === null ? null : requested.memoryGb * 2 ** 30;
  const f = usageFigures(a, { cpus: requested.cpus, memoryBytes, startedAt: a.startedAt, endedAt: a.endedAt, now });
  if (!f) return null;
  return {
    cpuSeconds: f.cpuSeconds,
    averageCores: f.averageCores,
    rssBytes: a.rssBytes,
    peakRssBytes: a.peakRssBytes,
    peakProcs: a.peakProcs,
    sampledAt: iso(a.usageAt),
    requested: { cpus: requested.cpus, memoryBytes },
    efficiency: { cpu: f.cpuEfficiency, memory: f.memoryEfficiency },
    series: series ?? [],
  };
}

/** Maps an Attempt row to an AttemptView (logBytes: what its log takes on disk now, compressed or not; usage: null unless given). */
export async function toAttemptView(a: Attempt, usage: AttemptUsageView | null = null): Promise<AttemptView> {
  return {
    number: a.number,
    status: a.status,
    cause: a.cause === 'restart' || a.cause === 'recovery' ? a.cause : 'first',
    exitCode: a.exitCode,
    reason: a.statusReason,
    executor: a.executor,
    nodes: nodeNamesOf(a.nodes),
    createdAt: a.createdAt.toISOString(),
    startedAt: iso(a.startedAt),
    endedAt: iso(a.endedAt),
    logBytes: await logDiskBytes(a.logPath),
    usage,
    gpus: attemptGpusView(a),
    osUser: a.osUser,
    logLostBytes: a.logLostBytes ? a.logLostBytes : null,
  };
}

/** An attempt's GPUs (Attempt.gpus, Attempt.gpuGrant) with its GPU-seconds so far; null: none. */
function attemptGpusView(a: Attempt, now = Date.now()): AttemptView['gpus'] {
  const g = a.gpuGrant && typeof a.gpuGrant === 'object' ? (a.gpuGrant as { type?: unknown; count?: unknown; devices?: unknown }) : null;
  if (!a.gpus || !g || typeof g.type !== 'string' || typeof g.count !== 'number') return null;
  const ran = a.startedAt ? Math.max(0, (a.endedAt?.getTime() ?? now) - a.startedAt.getTime()) / 1000 : 0;
  const devices = Array.isArray(g.devices) ? (g.devices as Array<{ index: number; share: number }>) : undefined;
  return { type: g.type, count: g.count, ...(devices ? { devices } : {}), gpuSeconds: Math.round(a.gpus * ran * 1000) / 1000 };
}

/** Maps a JobEvent row to a JobEventView. */
export function toJobEventView(e: JobEvent): JobEventView {
  return {
    id: e.id,
    at: e.at.toISOString(),
    entity: e.entity === 'task' || e.entity === 'attempt' || e.entity === 'server' ? e.entity : 'job',
    taskIndex: e.taskIndex,
    attemptNumber: e.attemptNumber,
    from: e.from,
    to: e.to,
    reason: e.reason,
  };
}

/** Maps a Task row with its attempts to a TaskView (envs masked; secrets always), each attempt with its usage and series. */
export async function toTaskView(t: Task & { attempts: Attempt[] }, series: ReadonlyMap<number, UsagePoint[]> = new Map(), now: Date = new Date()): Promise<TaskView> {
  const s = taskSpecView(t.spec);
  const requested = { cpus: s.resources.cpus, memoryGb: s.resources.memoryGb };
  const latest = t.attempts.reduce<Attempt | null>((best, a) => (best === null || a.number > best.number ? a : best), null);
  return {
    ...toTaskSummary(t, t.attempts.length, latest?.nodes ?? null),
    labels: taskLabels(t.spec),
    statusReason: t.statusReason,
    exitCode: t.exitCode,
    setup: s.setup,
    run: s.run,
    envs: s.envs,
    workdir: s.workdir,
    resources: s.resources,
    recoverOnExitCodes: s.recoverOnExitCodes,
    attemptList: await Promise.all([...t.attempts].sort((a, b) => a.number - b.number).map((a) => toAttemptView(a, toUsageView(a, series.get(a.id), requested, now)))),
  };
}
