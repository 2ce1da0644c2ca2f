/**
 * `jobdeck cancel ID… | -a [-y]`, `jobdeck delete ID…` and `jobdeck status ID`.
 *
 * Cancel and delete are different verbs (as in Ray's job API): cancel stops a job that is not
 * finished (its running attempt gets SIGTERM, then SIGKILL), delete removes a finished job and
 * its logs.
 */
import { renderUsage } from '../usage-render';
import { createInterface } from 'node:readline/promises';
import Table from 'cli-table3';
import type { Command } from 'commander';
import type { CancelResult, JobDetail } from '../../api/types';
import { placeText, restartingText, waitingText } from '../../jobs/waiting';
import { JOB_STATUSES, JOB_TERMINAL } from '../../jobs/status';
import type { CliContext } from '../context';
import { CliError, usageError } from '../errors';
import { EXIT } from '../exit-codes';
import { colorStatus, formatAgo, formatDuration, taskLabel } from '../format';
import { parseJobId } from './resolve';

/** Options of `cancel`. */
export interface CancelOptions {
  all?: boolean;
  yes?: boolean;
}

/**
 * Prints what a cancel did and answers the exit code: NOT_FOUND if any id was unknown, else
 * REFUSED if any job had already finished, else OK.
 */
export function reportCancel(ctx: CliContext, r: CancelResult): number {
  const c = ctx.errColors;
  for (const id of r.cancelled) ctx.out(`Job ${id} cancelled.`);
  for (const id of r.cancelling) ctx.out(`Job ${id} is being cancelled (its running attempt is being stopped).`);
  for (const t of r.alreadyTerminal) ctx.err(`${c.red('error:')} job ${t.id} already finished (status: ${t.status}); nothing to cancel`);
  for (const id of r.notFound) ctx.err(`${c.red('error:')} job ${id} not found`);
  for (const id of r.forbidden ?? []) ctx.err(`${c.red('error:')} job ${id} was submitted by another user: a member cancels only its own jobs`);
  if (r.notFound.length) return EXIT.NOT_FOUND;
  if (r.alreadyTerminal.length || r.forbidden?.length) return EXIT.REFUSED;
  return EXIT.OK;
}

async function confirm(ctx: CliContext, question: string): Promise<boolean> {
  const rl = createInterface({ input: ctx.io.stdin, output: ctx.io.stderr as unknown as NodeJS.WritableStream, terminal: !!ctx.io.stdin.isTTY });
  try {
    const answer = await rl.question(question);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** The action of `cancel`. */
export async function cancelAction(ctx: CliContext, ids: string[], opts: CancelOptions): Promise<number> {
  if (opts.all && ids.length) throw usageError('give job ids or -a/--all, not both');
  if (!opts.all && !ids.length) throw usageError('give the job ids to cancel (jobdeck cancel 7 8), or -a/--all for every unfinished job');
  const client = await ctx.client();
  if (!opts.all) {
    const parsed = [...new Set(ids.map(parseJobId))];
    return reportCancel(ctx, await client.cancel({ ids: parsed }));
  }
  if (opts.yes) {
    const r = await client.cancel({ all: true });
    if (!r.cancelled.length && !r.cancelling.length) ctx.out('No unfinished jobs to cancel.');
    return reportCancel(ctx, r);
  }
  // Refuse before looking, so a script gets the same answer whatever is running.
  if (!ctx.io.stdin.isTTY) throw usageError('refusing to cancel every unfinished job without confirmation: stdin is not a terminal; add -y/--yes');
  const live = await client.listAll({ status: JOB_STATUSES.filter((s) => !JOB_TERMINAL.has(s)) }, 10_000);
  if (!live.jobs.length) {
    ctx.out('No unfinished jobs to cancel.');
    return EXIT.OK;
  }
  const n = live.jobs.length;
  const shown = live.jobs.slice(0, 20).map((j) => `${j.id} (${j.name}, ${j.status})`).join(', ');
  ctx.err(`Jobs to cancel: ${shown}${n > 20 ? ` … and ${n - 20} more` : ''}`);
  if (!(await confirm(ctx, `Cancel ${n} unfinished job${n === 1 ? '' : 's'}? [y/N] `))) {
    ctx.err('Aborted; nothing was cancelled.');
    return EXIT.REFUSED;
  }
  // Cancel exactly the jobs that were confirmed (a job submitted meanwhile is left alone).
  return reportCancel(ctx, await client.cancel({ ids: live.jobs.map((j) => j.id) }));
}

/** The action of `delete`: deletes each job; answers the first failure's code (or OK). */
export async function deleteAction(ctx: CliContext, ids: string[]): Promise<number> {
  if (!ids.length) throw usageError('give the ids of the jobs to delete (jobdeck delete 7 8)');
  const parsed = [...new Set(ids.map(parseJobId))];
  const client = await ctx.client();
  let code: number = EXIT.OK;
  for (const id of parsed) {
    try {
      await client.delete(id);
      ctx.out(`Job ${id} deleted.`);
    } catch (err) {
      if (!(err instanceof CliError) || err.exitCode === EXIT.UNREACHABLE || err.exitCode === EXIT.UNAUTHORIZED) throw err;
      ctx.err(`${ctx.errColors.red('error:')} ${err.message}`);
      if (code === EXIT.OK) code = err.exitCode;
    }
  }
  return code;
}

/** cli-table3 borders for a plain table: columns two spaces apart, no lines (also `jobdeck queues`). */
export const PLAIN_CHARS = {
  top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
  bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
  left: '', 'left-mid': '', mid: '', 'mid-mid': '',
  right: '', 'right-mid': '', middle: '  ',
};

function ms(from: string | null, to: string | null, now: Date): number | null {
  if (!from) return null;
  // Clocks of different writers may put an end a few ms before its start: that is 0, not "-".
  return Math.max(0, (to ? new Date(to).getTime() : now.getTime()) - new Date(from).getTime());
}

/** A task's restarts as `spent/allowed` (job_recovery.max_restarts_on_errors), plus recoveries when any. */
export function restartsCell(t: { restarts: number; maxRestarts: number; recoveries: number }): string {
  return `${t.restarts}/${t.maxRestarts}${t.recoveries ? ` +${t.recoveries} recov.` : ''}`;
}

/**
 * `jobdeck status` text for one job: a header, then a table with one row per task (its status,
 * exit code, restarts spent/allowed, start, duration, reason) followed by one row per attempt of
 * it (number, cause, status, exit code, start, duration, reason). Tasks are 0-based, attempts
 * 1-based, as everywhere in jobdeck.
 */
export function renderStatus(job: JobDetail, now: Date, c: CliContext['outColors']): string {
  const lines: string[] = [];
  lines.push(`Job ${job.id} (${job.name}): ${colorStatus(job.status, c)}${job.statusReason ? ` — ${job.statusReason}` : ''}`);
  if (job.status === 'PENDING') {
    lines.push(`  waiting: ${waitingText(job.pendingReason)} (priority ${job.priority}, queue ${job.queue})`);
    if (job.place) lines.push(`  place: ${placeText(job.place, job.queue)}`);
  } else if (job.pendingReason) lines.push(`  not running yet: ${job.pendingReason} (submitted to ${job.executor}, waiting in its queue)`);
  if (job.nextAttemptAt) lines.push(`  ${restartingText(job.nextAttemptAt, now)} (at ${new Date(job.nextAttemptAt).toISOString()})`);
  lines.push(
    `  submitted ${formatAgo(job.submittedAt, now)}${job.owner ? ` by ${job.owner}` : ''}${job.viaToken ? ` via token ${job.viaToken}` : ''}, total ${formatDuration(job.totalDurationMs)}, running ${formatDuration(job.jobDurationMs)}, ` +
      `${job.taskCount} task${job.taskCount === 1 ? '' : 's'}, ${job.restartCount} restart${job.restartCount === 1 ? '' : 's'}, ${job.recoveryCount} recover${job.recoveryCount === 1 ? 'y' : 'ies'}`,
  );
  const table = new Table({
    head: ['TASK', 'ATTEMPT', 'CAUSE', 'STATUS', 'EXIT', 'RESTARTS', 'STARTED', 'DURATION', 'REASON'],
    chars: PLAIN_CHARS,
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true },
  });
  for (const t of job.tasks) {
    const started = t.startedAt ? formatAgo(t.startedAt, now) : '-';
    table.push([taskLabel(t.index, t.name), '', '', colorStatus(t.status, c), t.exitCode ?? '', restartsCell(t), started, formatDuration(ms(t.startedAt, t.endedAt, now)), t.statusReason ?? '']);
    for (const a of t.attemptList) {
      table.push(['', String(a.number), a.cause, colorStatus(a.status, c), a.exitCode ?? '', '', formatAgo(a.startedAt, now), formatDuration(ms(a.startedAt, a.endedAt, now)), a.reason ?? '']);
    }
  }
  lines.push('', ...table.toString().split('\n').map((l) => l.replace(/\s+$/, '')));
  lines.push(...renderUsage(job, PLAIN_CHARS));
  return lines.join('\n');
}

/** The action of `status`. */
export async function statusAction(ctx: CliContext, id: string, opts: { json?: boolean }): Promise<number> {
  const job = await (await ctx.client()).get(parseJobId(id));
  if (opts.json) ctx.out(JSON.stringify(job, null, 2));
  else ctx.out(renderStatus(job, ctx.io.now(), ctx.outColors));
  return EXIT.OK;
}

/** Adds `cancel`, `delete` and `status` to the program. */
export function addManage(program: Command, ctx: () => CliContext, run: (fn: () => Promise<number>) => Promise<void>): void {
  program
    .command('cancel')
    .summary('cancel jobs that have not finished')
    .description(
      'Cancel jobs: a pending job ends CANCELLED at once; a running one gets SIGTERM (SIGKILL after a ' +
        'grace period) and ends CANCELLED. Cancelling a finished job is an error (exit 10); ' +
        'an unknown id exits 4. -a/--all asks for confirmation unless -y (and refuses without a terminal).',
    )
    .argument('[ids...]', 'job ids')
    .option('-a, --all', 'cancel every job that has not finished')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (ids: string[], opts: CancelOptions) => run(() => cancelAction(ctx(), ids, opts)));

  program
    .command('delete')
    .summary('delete finished jobs and their logs')
    .description('Delete finished jobs (their records and logs). A job that has not finished cannot be deleted: cancel it first (exit 10).')
    .argument('<ids...>', 'job ids')
    .action(async (ids: string[]) => run(() => deleteAction(ctx(), ids)));

  program
    .command('status')
    .summary("show one job's tasks and attempts")
    .description(
      "One job: its status and why, where it waits (its reason and place in line) or when its next attempt starts, " +
        'who submitted it, then one row per task and per attempt — status, exit code, restarts, start, ' +
        'duration, reason — and what each attempt used (CPU, memory).',
    )
    .argument('<id>', 'job id')
    .option('--json', 'print the job as JSON (the API JobDetail)')
    .action(async (id: string, opts: { json?: boolean }) => run(() => statusAction(ctx(), id, opts)));
}
