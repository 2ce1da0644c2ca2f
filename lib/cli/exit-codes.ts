/**
 * The exit codes of the `jobdeck` command: ONE table used by the code, by `--help` and by
 * docs/cli.md (a unit test checks the doc matches this table). A CI script can trust them:
 * `jobdeck launch job.yaml` exits 0 only when the followed job SUCCEEDED.
 *
 * Ray's `ray job submit` exits non-zero on a failed job; SkyPilot's `sky jobs launch` does the
 * same; neither distinguishes the kinds of failure. jobdeck does, so a script can tell "my code
 * failed" from "the job was cancelled" from "I could not even talk to the server".
 */
import type { AttemptStatus, JobStatus, TaskStatus } from '../jobs/status';

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
  | 'INTERNAL';

/** The table, in code order. */
export const EXIT_CODE_TABLE: readonly ExitCodeRow[] = [
  { code: 0, name: 'OK', meaning: 'success; for launch/logs that follow a job: the job (or the followed task/attempt) SUCCEEDED' },
  { code: 1, name: 'JOB_FAILED', meaning: 'the followed job ended FAILED (its run exited non-zero and no restart was left)' },
  { code: 2, name: 'USAGE', meaning: 'bad usage or bad input: unknown option, invalid YAML/spec (file:line shown), ambiguous job name, missing file' },
  { code: 3, name: 'JOB_CANCELLED', meaning: 'the followed job ended CANCELLED' },
  { code: 4, name: 'NOT_FOUND', meaning: 'no such job (id or name), task or attempt' },
  { code: 5, name: 'STOPPED_FOLLOWING', meaning: 'stopped following before the job ended (Ctrl-C, output closed, or the server stayed unreachable); the job keeps running' },
  { code: 6, name: 'UNREACHABLE', meaning: 'cannot reach the jobdeck server (not running, wrong --url/JOBDECK_URL)' },
  { code: 7, name: 'UNAUTHORIZED', meaning: 'the server refused the token (missing or wrong --token/JOBDECK_TOKEN)' },
  { code: 8, name: 'JOB_FAILED_SETUP', meaning: 'the followed job ended FAILED_SETUP (its setup exited non-zero and no restart was left)' },
  { code: 9, name: 'JOB_FAILED_OTHER', meaning: 'the followed job ended FAILED_PRECHECKS, FAILED_NO_RESOURCE or FAILED_CONTROLLER (not the user code), or an attempt was LOST' },
  { code: 10, name: 'REFUSED', meaning: 'the server refused the operation (e.g. cancel of a finished job, delete of a running job, submission-id conflict) or you declined a confirmation' },
  { code: 11, name: 'INTERNAL', meaning: 'unexpected error (server error 5xx, protocol error, bug): see the message' },
] as const;

/** Exit codes by name, e.g. `EXIT.NOT_FOUND` (4). */
export const EXIT: { readonly [K in ExitName]: number } = Object.fromEntries(EXIT_CODE_TABLE.map((r) => [r.name, r.code])) as { [K in ExitName]: number };

/**
 * The exit code for a job, task or attempt that ended in `status` (a terminal status).
 * A status that is not terminal (the follow stopped early, or `--no-follow`) is not handled
 * here: callers decide (STOPPED_FOLLOWING or OK).
 */
export function exitCodeForStatus(status: JobStatus | TaskStatus | AttemptStatus | string): number {
  switch (status) {
    case 'SUCCEEDED':
      return EXIT.OK;
    case 'FAILED':
      return EXIT.JOB_FAILED;
    case 'FAILED_SETUP':
      return EXIT.JOB_FAILED_SETUP;
    case 'CANCELLED':
      return EXIT.JOB_CANCELLED;
    case 'FAILED_PRECHECKS':
    case 'FAILED_NO_RESOURCE':
    case 'FAILED_CONTROLLER':
    case 'LOST':
      return EXIT.JOB_FAILED_OTHER;
    default:
      return EXIT.INTERNAL;
  }
}

/** The table as plain text for `--help` (aligned columns). */
export function exitCodesHelp(): string {
  const lines = EXIT_CODE_TABLE.map((r) => `  ${String(r.code).padStart(2)}  ${r.meaning}`);
  return ['Exit codes:', ...lines].join('\n');
}

/** The table as Markdown (docs/cli.md carries exactly this text between markers). */
export function exitCodesMarkdown(): string {
  const rows = EXIT_CODE_TABLE.map((r) => `| ${r.code} | \`${r.name}\` | ${r.meaning} |`);
  return ['| Code | Name | Meaning |', '| ---: | --- | --- |', ...rows].join('\n');
}
