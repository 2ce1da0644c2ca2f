/**
 * How a PENDING job's stored reason (Job.pendingReason, written by the admission pass:
 * lib/jobs/capacity) is shown — by the CLI and the dashboard alike. Pure, no import: safe in
 * the browser.
 */

/**
 * What separates a reason from its note (" · start timeout in 12 min", lib/jobs/capacity): the
 * short form drops the note, so the main reason fits a column.
 */
export const REASON_NOTE = ' · ';

/**
 * The reason, or for a job no pass has read yet (it is further back than the pass looks) that it
 * waits in line. `short`: the reason without its note, at most 40 characters, for a list or table column.
 */
export function waitingText(reason: string | null, short = false): string {
  const full = reason ?? (short ? 'in line' : 'in line, behind the jobs admission looked at');
  const text = short ? full.split(REASON_NOTE)[0] : full;
  return short && text.length > 40 ? `${text.slice(0, 39)}…` : text;
}
