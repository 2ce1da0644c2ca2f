/**
 * The retention statements (docs/design.md "Retention"): which finished jobs' logs or records
 * the policy has come for, oldest first, a batch at a time, and the guarded write that records a
 * removal. Only terminal jobs are ever selected or written, and a terminal job never moves again
 * (lib/jobs/status.ts), so what a pass read stays removable while it removes it.
 *
 * A job's own `retention:` (its spec, lib/jobs/spec/retention.ts) wins over the policy: the
 * period is `COALESCE(spec→retention→logs|job, policy)`, `forever` never matches, and no period
 * at all (no policy, no own retention) keeps the job. Every period is at least one day, so the
 * `endedAt < now − 1 day` bound lets the (logsRemovedAt, endedAt) / (endedAt) index stop early.
 */
import { JOB_TERMINAL } from '../jobs/status';
import { appendAudit, AUDIT_MAX_IDS, SERVER_ACTOR, type AuditEntry } from './audit';
import { deleteTerminalJobs } from './delete';
import { recordServerEvents } from './server-event';
import type { Store } from './handle';

/** The SQL list of terminal statuses (constants of lib/jobs/status.ts, never user input). */
const TERMINAL_SQL = [...JOB_TERMINAL].map((s) => `'${s}'`).join(', ');

/** A period in days of `key` (`logs` | `job`), the job's own else the policy's ($n), as SQL; NULL for forever or none. */
function periodSql(key: 'logs' | 'job', policyParam: string): string {
  const v = `COALESCE("spec"->'retention'->>'${key}', ${policyParam}::text)`;
  // CASE: the cast runs only on digits (a WHERE clause's AND has no evaluation order).
  return `(CASE WHEN ${v} ~ '^[0-9]{1,6}$' THEN ${v}::int END)`;
}

const DAY_MS = 86_400_000;
const ts = (d: Date) => d.toISOString();

/** A finished job whose logs a pass may remove: its id, its end and its attempts' log paths. */
export interface RetentionJob {
  id: number;
  endedAt: Date;
  logPaths: string[];
}

async function withLogPaths(store: Store, rows: Array<{ id: number; endedAt: Date }>): Promise<RetentionJob[]> {
  if (rows.length === 0) return [];
  const attempts = await store.prisma.attempt.findMany({ where: { jobId: { in: rows.map((r) => r.id) }, logPath: { not: null } }, select: { jobId: true, logPath: true } });
  const paths = new Map<number, string[]>();
  for (const a of attempts) paths.set(a.jobId, [...(paths.get(a.jobId) ?? []), a.logPath!]);
  return rows.map((r) => ({ ...r, logPaths: paths.get(r.id) ?? [] }));
}

/**
 * Finished jobs whose logs are older than their period (`logsDays`: the policy's, null: none),
 * oldest end first, at most `limit`.
 */
export async function jobsWithExpiredLogs(store: Store, opts: { now: Date; logsDays: number | null; limit: number }): Promise<RetentionJob[]> {
  const rows = await store.prisma.$queryRawUnsafe<Array<{ id: number; endedAt: Date }>>(
    `SELECT "id", "endedAt" FROM "Job"
      WHERE "logsRemovedAt" IS NULL AND "endedAt" < $1::timestamp AND "status"::text IN (${TERMINAL_SQL})
        AND "endedAt" < $2::timestamp - make_interval(days => ${periodSql('logs', '$3')})
      ORDER BY "endedAt", "id" LIMIT $4`,
    ts(new Date(opts.now.getTime() - DAY_MS)),
    ts(opts.now),
    opts.logsDays === null ? null : String(opts.logsDays),
    opts.limit,
  );
  return withLogPaths(store, rows);
}

/**
 * Finished jobs whose logs are still there and not kept forever, oldest end first (for the size
 * limit), at most `limit`, after (`endedAt`, `id`) `after` when given.
 */
export async function oldestJobsWithLogs(store: Store, opts: { limit: number; after?: { endedAt: Date; id: number } }): Promise<RetentionJob[]> {
  const after = opts.after ? `AND ("endedAt", "id") > ($2::timestamp, $3::int)` : '';
  const rows = await store.prisma.$queryRawUnsafe<Array<{ id: number; endedAt: Date }>>(
    `SELECT "id", "endedAt" FROM "Job"
      WHERE "logsRemovedAt" IS NULL AND "endedAt" IS NOT NULL AND "status"::text IN (${TERMINAL_SQL})
        AND COALESCE("spec"->'retention'->>'logs', '') <> 'forever' ${after}
      ORDER BY "endedAt", "id" LIMIT $1`,
    opts.limit,
    ...(opts.after ? [ts(opts.after.endedAt), opts.after.id] : []),
  );
  return withLogPaths(store, rows);
}

/**
 * Finished jobs older than their record's period (`jobsDays`: the policy's, null: none), oldest
 * end first, at most `limit` ids (deleted with lib/store deleteTerminalJobs).
 */
export async function jobsPastRetention(store: Store, opts: { now: Date; jobsDays: number | null; limit: number }): Promise<number[]> {
  const rows = await store.prisma.$queryRawUnsafe<Array<{ id: number }>>(
    `SELECT "id" FROM "Job"
      WHERE "endedAt" < $1::timestamp AND "status"::text IN (${TERMINAL_SQL})
        AND "endedAt" < $2::timestamp - make_interval(days => ${periodSql('job', '$3')})
      ORDER BY "endedAt", "id" LIMIT $4`,
    ts(new Date(opts.now.getTime() - DAY_MS)),
    ts(opts.now),
    opts.jobsDays === null ? null : String(opts.jobsDays),
    opts.limit,
  );
  return rows.map((r) => r.id);
}

/** What one job's removal freed (for its history entry). */
export interface LogsRemoved {
  jobId: number;
  files: number;
  bytes: number;
}

/**
 * Records that the policy removed these jobs' logs (guarded: only terminal jobs whose logs were
 * not recorded as removed yet), with one `LOGS_REMOVED` history entry each, in one transaction;
 * announces `logs-removed` per job on the bus (open log streams of the job are told and closed).
 * @returns the job ids written.
 */
export async function recordLogsRemoved(store: Store, removed: readonly LogsRemoved[], at: Date): Promise<number[]> {
  if (removed.length === 0) return [];
  const ids = await store.prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRawUnsafe<Array<{ id: number }>>(
      `UPDATE "Job" SET "logsRemovedAt" = $1::timestamp WHERE "id" = ANY($2::int[]) AND "logsRemovedAt" IS NULL AND "status"::text IN (${TERMINAL_SQL}) RETURNING "id"`,
      ts(at),
      removed.map((r) => r.jobId),
    );
    const written = new Set(rows.map((r) => r.id));
    const entries = removed.filter((r) => written.has(r.jobId)).map((r) => ({ jobId: r.jobId, to: 'LOGS_REMOVED' as const, reason: `logs removed by the retention policy (${r.files} file${r.files === 1 ? '' : 's'}, ${r.bytes} bytes)` }));
    await recordServerEvents({ prisma: tx, bus: null, columns: store.columns, prepared: store.prepared }, entries, at);
    return [...written];
  });
  for (const jobId of ids) store.bus.emit({ type: 'logs-removed', jobId });
  return ids;
}

/**
 * Which of `hashes` (upload content hashes, 64 hex digits) a job still names in its launch
 * (`Job.launch`: `workdirUpload`, `fileMountUploads.*.hash`), so a re-run can reuse them. A
 * substring of the launch's text: a 64-hex-digit hash appears nowhere else by chance, and a false
 * "referenced" only keeps a file. Each unreferenced hash reads every launch (no index): the
 * retention system asks at most hourly, for uploads older than a day.
 */
export async function referencedUploads(store: Store, hashes: readonly string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const rows = await store.prisma.$queryRawUnsafe<Array<{ h: string }>>(
    `SELECT h FROM unnest($1::text[]) AS h WHERE EXISTS (SELECT 1 FROM "Job" WHERE "launch" IS NOT NULL AND strpos("launch"::text, h) > 0)`,
    [...hashes],
  );
  return new Set(rows.map((r) => r.h));
}

/**
 * The audit row of one retention batch (docs/design.md "Retention"): written by the server
 * (SERVER_ACTOR), `detail` = `{count, ids (sorted, at most AUDIT_MAX_IDS), bytes}` — job ids for
 * `retention.jobs`, upload hashes for `retention.uploads`; `bytes` what their files held.
 */
function retentionAudit(action: 'retention.jobs' | 'retention.uploads', ids: ReadonlyArray<number | string>, bytes: number): AuditEntry {
  const sorted = [...ids].sort((a, b) => (typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b))));
  return { ...SERVER_ACTOR, action, target: null, detail: { count: ids.length, ids: sorted.slice(0, AUDIT_MAX_IDS) as number[] | string[], bytes } };
}

/**
 * Deletes finished jobs past their retention (lib/store deleteTerminalJobs: only terminal rows)
 * and appends one `retention.jobs` audit row listing them, with the bytes of their folders
 * (`folderBytes` by job id), in the same transaction. @returns the ids deleted.
 */
export async function deleteJobsPastRetention(store: Store, ids: number[], folderBytes: ReadonlyMap<number, number>): Promise<number[]> {
  const r = await deleteTerminalJobs(store, ids, (deleted) => retentionAudit('retention.jobs', deleted, deleted.reduce((n, id) => n + (folderBytes.get(id) ?? 0), 0)));
  return r.deleted;
}

/** Appends the `retention.uploads` audit row of stored uploads a pass removed (hashes, bytes freed). */
export async function recordUploadsRemoved(store: Store, hashes: readonly string[], bytes: number): Promise<void> {
  if (!hashes.length) return;
  // Who sent them goes with them: sent again, an upload is owned afresh.
  await store.prisma.uploadOwner.deleteMany({ where: { hash: { in: [...hashes] } } });
  await appendAudit(store, retentionAudit('retention.uploads', hashes, bytes));
}
