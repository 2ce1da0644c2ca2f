/**
 * Turning what the user typed into jobs: ids (`7`) and names (`-n train`). A name must match
 * exactly one job; several matches are an error that lists them (id, status, submitted), like
 * SkyPilot's "Multiple jobs found with name …".
 */
import type { JobSummary } from '../../api/types';
import type { JobdeckClient } from '../client';
import { usageError, notFoundError } from '../errors';
import { formatAgo } from '../format';

/** Most jobs a name lookup reads. */
const NAME_SCAN_LIMIT = 2000;

/**
 * Parses a job id argument.
 * @throws CliError USAGE when it is not a positive integer.
 */
export function parseJobId(raw: string): number {
  const s = raw.trim();
  if (!/^[0-9]+$/.test(s) || Number(s) < 1 || Number(s) > 2_147_483_647) throw usageError(`job id must be a positive integer, got "${raw}"`);
  return Number(s);
}

/**
 * Parses a duration option: a number of seconds (`300`), or with a unit: `500ms`, `90s`, `5m`,
 * `1h`. Answers milliseconds (> 0). @throws CliError USAGE.
 */
export function parseDuration(raw: string, what: string): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|min|h)?$/i.exec(raw.trim());
  const unit = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000 }[(m?.[2] ?? 's').toLowerCase() as 'ms'];
  const ms = m ? Math.round(Number(m[1]) * unit) : NaN;
  if (!(ms > 0)) throw usageError(`${what} must be a duration > 0 such as 300 (seconds), 90s, 5m or 1h, got "${raw}"`);
  return ms;
}

/** Parses a non-negative (or positive with `min`) integer option. @throws CliError USAGE. */
export function parseIntArg(raw: string, what: string, min = 0): number {
  const s = raw.trim();
  if (!/^[0-9]+$/.test(s) || Number(s) < min) throw usageError(`${what} must be an integer ≥ ${min}, got "${raw}"`);
  return Number(s);
}

/** Lines listing jobs for an ambiguity error: `  ID 7  RUNNING  submitted 3 minutes ago`. */
export function listForError(jobs: readonly JobSummary[], now: Date): string[] {
  const w = Math.max(...jobs.map((j) => String(j.id).length));
  const sw = Math.max(...jobs.map((j) => j.status.length));
  return jobs.map((j) => `  ID ${String(j.id).padEnd(w)}  ${j.status.padEnd(sw)}  submitted ${formatAgo(j.submittedAt, now)}`);
}

/**
 * The one job named exactly `name`.
 * @throws CliError NOT_FOUND when none; USAGE (listing them) when several.
 */
export async function resolveJobName(client: JobdeckClient, name: string, now: Date): Promise<JobSummary> {
  const { jobs } = await client.listAll({ q: name }, NAME_SCAN_LIMIT);
  const exact = jobs.filter((j) => j.name === name);
  if (exact.length === 1) return exact[0];
  if (exact.length > 1) {
    throw usageError(`${exact.length} jobs are named "${name}"; give the job id instead:`, listForError(exact, now));
  }
  const similar = jobs.slice(0, 5).map((j) => `"${j.name}" (ID ${j.id})`);
  throw notFoundError(`no job named "${name}"${similar.length ? `; similar: ${similar.join(', ')}` : ''}`);
}
