/**
 * What submitted a job (Job.origin): the CLI, a program calling the API, or the dashboard's New
 * job page and its Re-run buttons. The client says so on submit (`origin`); a submit that says
 * nothing is "api". Browser-safe.
 */
export const SUBMIT_ORIGINS = ['cli', 'api', 'dashboard'] as const;

/** One of SUBMIT_ORIGINS. */
export type SubmitOrigin = (typeof SUBMIT_ORIGINS)[number];

/** The origin a stored value names, "api" for anything else (rows written before it was kept). */
export function originOf(value: unknown): SubmitOrigin {
  return (SUBMIT_ORIGINS as readonly unknown[]).includes(value) ? (value as SubmitOrigin) : 'api';
}
