/**
 * What submitted a job (Job.origin): the CLI, a program calling the API, or the dashboard's New
 * job page and its Re-run buttons. The client says so on submit (`origin`); a submit that says
 * nothing is "api". Browser-safe.
 */
export const SUBMIT_ORIGINS = ['cli', 'api', 'dashboard'] as const;

/** Job.origin of a job a schedule's fire submitted (the server, not a client, says it). */
export const SCHEDULE_ORIGIN = 'schedule';

/** One of SUBMIT_ORIGINS, or the schedule's. */
export type SubmitOrigin = (typeof SUBMIT_ORIGINS)[number] | typeof SCHEDULE_ORIGIN;

/** The origin a stored value names, "api" for anything else (rows written before it was kept). */
export function originOf(value: unknown): SubmitOrigin {
  return (SUBMIT_ORIGINS as readonly unknown[]).includes(value) || value === SCHEDULE_ORIGIN ? (value as SubmitOrigin) : 'api';
}
