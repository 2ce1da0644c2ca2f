/**
 * The log compression statements (docs/design.md §8 "Compressed logs"): which finished attempts'
 * logs the compressor has not handled yet, oldest end first, and the write that records it has.
 * Only terminal attempts are selected and written; a terminal attempt never moves again
 * (lib/jobs/status.ts), so its log is finished. Index `(logCompressedAt, endedAt)`.
 */
import { ATTEMPT_TERMINAL } from '../jobs/status';
import type { Store } from './handle';

/** The SQL list of terminal attempt statuses (constants of lib/jobs/status.ts, never user input). */
const TERMINAL_SQL = [...ATTEMPT_TERMINAL].map((s) => `'${s}'`).join(', ');

/** A finished attempt whose log the compressor has not handled. */
export interface CompressCandidate {
  id: number;
  jobId: number;
  endedAt: Date;
  logPath: string;
}

/**
 * Finished attempts with a log path, not handled by the compressor, that ended before `endedBefore`,
 * oldest end first, after (`endedAt`, `id`) `after` when given, at most `limit`.
 */
export async function attemptsToCompress(store: Store, opts: { endedBefore: Date; limit: number; after?: { endedAt: Date; id: number } }): Promise<CompressCandidate[]> {
  const after = opts.after ? `AND ("endedAt", "id") > ($3::timestamp, $4::int)` : '';
  return store.prisma.$queryRawUnsafe<CompressCandidate[]>(
    `SELECT "id", "jobId", "endedAt", "logPath" FROM "Attempt"
      WHERE "logCompressedAt" IS NULL AND "endedAt" < $1::timestamp AND "logPath" IS NOT NULL
        AND "status"::text IN (${TERMINAL_SQL}) ${after}
      ORDER BY "endedAt", "id" LIMIT $2`,
    opts.endedBefore.toISOString(),
    opts.limit,
    ...(opts.after ? [opts.after.endedAt.toISOString(), opts.after.id] : []),
  );
}

/**
 * Records that the compressor handled these attempts' logs (guarded: terminal attempts not
 * recorded yet), one statement.
 * @returns the attempts written, each with whether its job's logs were removed by the retention
 *   policy meanwhile (the caller then removes what it just wrote).
 */
export async function recordLogsCompressed(store: Store, attemptIds: readonly number[], at: Date): Promise<Array<{ id: number; logsRemoved: boolean }>> {
  if (attemptIds.length === 0) return [];
  return store.prisma.$queryRawUnsafe<Array<{ id: number; logsRemoved: boolean }>>(
    `UPDATE "Attempt" AS a SET "logCompressedAt" = $1::timestamp
       FROM "Job" AS j
      WHERE j."id" = a."jobId" AND a."id" = ANY($2::int[]) AND a."logCompressedAt" IS NULL AND a."status"::text IN (${TERMINAL_SQL})
      RETURNING a."id", (j."logsRemovedAt" IS NOT NULL) AS "logsRemoved"`,
    at.toISOString(),
    [...attemptIds],
  );
}
