/**
 * The exit codes of the `jobdeck` command: ONE table used by the code, by `--help` (lib/cli/help.ts) and by
 * docs/cli.md (a unit test checks the doc matches this table). A CI script can trust them:
 * `jobdeck launch job.yaml` exits 0 only when the followed job SUCCEEDED.
 *
 * Ray's `ray job submit` exits non-zero on a failed job; SkyPilot's `sky jobs launch` does the
 * same; neither distinguishes the kinds of failure. jobdeck does, so a script can tell "my code
 * failed" from "the job was cancelled" from "I could not even talk to the server".
 */
import type { AnyStatus } from '../jobs/status';

/** One row of the table. */
export interface ExitCodeRow {
  code: number;
  /** Stable identifier (used in code). */
  name: ExitName;
  /** One line for `--help` and the docs. */
  meaning: string;
}

export type ExitName =
  | 'OK'
  | 'JOB_FAILED'
  | 'USAGE'
  | 'JOB_CANCELLED'
  | 'NOT_FOUND'
  | 'STOPPED_FOLLOWING'
  | 'UNREACHABLE'
  | 'UNAUTHORIZED'
  | 'JOB_FAILED_SETUP'
  | 'JOB_FAILED_OTHER'
  | 'REFUSED'
  | 'INTERNAL'
  | 'FORBIDDEN';

/** The table, in code order. */
export const EXIT_CODE_TABLE: readonly ExitCodeRow[] = [
  { code: 0, name: 'OK', meaning: 'success; for launch/logs that follow a job: the job (or the followed task/attempt) SUCCEEDED' },
  { code: 1, name: 'JOB_FAILED', meaning: 'the followed job ended FAILED (its run exited non-zero and no restart was left)' },
  { code: 2, name: 'USAGE', meaning: 'bad usage or bad input: unknown option, invalid YAML/spec (file:line shown), ambiguous job name, missing file' },
  { code: 3, name: 'JOB_CANCELLED', meaning: 'the followed job ended CANCELLED' },
  { code: 4, name: 'NOT_FOUND', meaning: 'no such job (id or name), task or attempt' },
  { code: 5, name: 'STOPPED_FOLLOWING', meaning: 'stopped following before the job ended (Ctrl-C, output closed, or the server stayed unreachable); the job keeps running' },
  { code: 6, name: 'UNREACHABLE', meaning: 'cannot reach the jobdeck server (not running, wrong --url/JOBDECK_URL)' },
  { code: 7, name: 'UNAUTHORIZED', meaning: 'the server refused the token (missing, wrong, revoked or expired --token/JOBDECK_TOKEN, or its user disabled)' },
  { code: 8, name: 'JOB_FAILED_SETUP', meaning: 'the followed job ended FAILED_SETUP (its setup exited non-zero and no restart was left)' },
  { code: 9, name: 'JOB_FAILED_OTHER', meaning: 'the followed job ended FAILED_PRECHECKS, FAILED_NO_RESOURCE or FAILED_CONTROLLER (not the user code), or an attempt was LOST' },
  { code: 10, name: 'REFUSED', meaning: 'the server refused the operation (e.g. cancel of a finished job, delete of a running job, submission-id conflict, a priority above your cap) or you declined a confirmation' },
  { code: 11, name: 'INTERNAL', meaning: 'unexpected error (server error 5xx, protocol error, bug): see the message' },
  { code: 12, name: 'FORBIDDEN', meaning: "forbidden: the server accepted the token, but its user may not do that (HTTP 403: the role is too low, or the job is another member's); the message says what it needs" },
] as const;

/** Exit codes by name, e.g. `EXIT.NOT_FOUND` (4). */
export const EXIT: { readonly [K in ExitName]: number } = Object.fromEntries(EXIT_CODE_TABLE.map((r) => [r.name, r.code])) as { [K in ExitName]: number };

/**
 * The exit code of each status a followed job, task or attempt can end in; `null` for a live
 * status, which is no end (the follow stopped early, or `--no-follow`): callers decide
 * (STOPPED_FOLLOWING or OK). A `Record` over every status, so a new status is a tsc error here.
 */
const EXIT_OF_STATUS: { readonly [S in AnyStatus]: ExitName | null } = {
  PENDING: null,
  STARTING: null,
  RUNNING: null,
  RECOVERING: null,
  CANCELLING: null,
  SUCCEEDED: 'OK',
  FAILED: 'JOB_FAILED',
  FAILED_SETUP: 'JOB_FAILED_SETUP',
  CANCELLED: 'JOB_CANCELLED',
  FAILED_PRECHECKS: 'JOB_FAILED_OTHER',
  FAILED_NO_RESOURCE: 'JOB_FAILED_OTHER',
  FAILED_CONTROLLER: 'JOB_FAILED_OTHER',
  LOST: 'JOB_FAILED_OTHER',
};

/**
 * The exit code for a job, task or attempt that ended in `status` (a terminal status). A live
 * status, or a name this CLI does not know (a newer server's), answers INTERNAL.
 */
export function exitCodeForStatus(status: AnyStatus | string): number {
  const name = Object.hasOwn(EXIT_OF_STATUS, status) ? EXIT_OF_STATUS[status as AnyStatus] : null;
  return EXIT[name ?? 'INTERNAL'];
}

/** The table as Markdown (docs/cli.md carries exactly this text between markers). */
export function exitCodesMarkdown(): string {
  const rows = EXIT_CODE_TABLE.map((r) => `| ${r.code} | \`${r.name}\` | ${r.meaning} |`);
  return ['| Code | Name | Meaning |', '| ---: | --- | --- |', ...rows].join('\n');
}
