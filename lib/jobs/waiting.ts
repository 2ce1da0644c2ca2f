/**
 * How a PENDING job's stored reason (Job.pendingReason, written by the admission pass:
 * lib/jobs/capacity) and place in line (Job.pendingPlace) are shown — by the CLI and the
 * dashboard alike. Pure, no import: safe in the browser.
 */

/**
 * Where a waiting job is in line, as an admission pass found it (Job.pendingPlace; docs/design.md
 * §6 "Why pending"). Positions count the jobs that still wait after the pass, in line order
 * (priority desc, then submission), on the job's executor.
 */
export interface JobPlace {
  /** 1-based place among its executor's waiting jobs; null when the pass did not read every job ahead of it. */
  position: number | null;
  /** 1-based place among the waiting jobs of its queue on that executor. */
  queuePosition: number;
  /** The jobs waiting ahead of it (position − 1) and the CPUs and GPUs they ask for; null with position null. */
  ahead: { jobs: number; cpus: number; gpus: number } | null;
}

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

const fmt = (n: number) => (Number.isInteger(n) ? String(n) : String(Math.round(n * 100) / 100));

/**
 * A place in line in words. Short (a column): `#3 · q2` — third in its executor's line, second in
 * its queue; `q2` alone when the overall place is unknown. Long: `3rd in line (2nd in queue gpu);
 * ahead: 2 jobs asking for 6 CPUs, 2 GPUs`. Empty for null (no pass read the job yet).
 */
export function placeText(place: JobPlace | null | undefined, queue: string, short = false): string {
  if (!place) return '';
  if (short) return place.position === null ? `q${place.queuePosition}` : `#${place.position} · q${place.queuePosition}`;
  const where = place.position === null ? `${ordinal(place.queuePosition)} in queue ${queue}` : `${ordinal(place.position)} in line (${ordinal(place.queuePosition)} in queue ${queue})`;
  const a = place.ahead;
  if (!a) return where;
  if (a.jobs === 0) return `${where}; nothing waits ahead`;
  const asks = [`${fmt(a.cpus)} CPU${a.cpus === 1 ? '' : 's'}`, ...(a.gpus > 0 ? [`${fmt(a.gpus)} GPU${a.gpus === 1 ? '' : 's'}`] : [])].join(', ');
  return `${where}; ahead: ${a.jobs} job${a.jobs === 1 ? '' : 's'} asking for ${asks}`;
}

/** 1 → "1st", 2 → "2nd", 11 → "11th", 23 → "23rd". */
export function ordinal(n: number): string {
  const t = n % 100;
  const s = t >= 11 && t <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${s}`;
}

/**
 * When a job's next attempt starts (JobSummary.nextAttemptAt: a restart or recovery waiting out
 * its backoff), in words: "restarting in 30 s" ("restart due" once the time has passed); short:
 * "restart in 30 s". Empty when none waits.
 */
export function restartingText(nextAttemptAt: string | null | undefined, now: Date, short = false): string {
  if (!nextAttemptAt) return '';
  const left = Date.parse(nextAttemptAt) - now.getTime();
  if (!(left > 0)) return short ? 'restart due' : 'next attempt due now';
  const s = Math.ceil(left / 1000);
  const text = s < 120 ? `${s} s` : s < 7200 ? `${Math.ceil(s / 60)} min` : `${Math.ceil(s / 3600)} h`;
  return short ? `restart in ${text}` : `restarting in ${text}`;
}
