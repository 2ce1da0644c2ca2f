/**
 * `jobdeck logs ID | -n NAME [TASK] [--no-follow] [--attempt K] [--rank K] [-t] | --all`: follows a job's logs
 * task by task and attempt by attempt over the job stream (SkyPilot `sky jobs logs`), or one task
 * / one attempt of it; a multi-node attempt's ranks interleaved line by line, each line prefixed
 * with its rank, or one rank's log alone.
 */
import type { Command } from 'commander';
import type { JobDetail } from '../../api/types';
import { isTerminal } from '../../jobs/status';
import type { CliContext } from '../context';
import { grepAction, type GrepOptions } from './log-grep';
import { CliError, notFoundError, usageError } from '../errors';
import { logsGoneLines } from '../follow';
import { logsRemovedText } from '../../logs/protocol';
import { EXIT } from '../exit-codes';
import { RECONNECT_TIMEOUT_OPTION, runFollow } from './follow-job';
import { parseDuration, parseIntArg, parseJobId, resolveJobName } from './resolve';

/** Options of `logs` as commander parses them. */
export interface LogsOptions {
  name?: string;
  follow: boolean;
  attempt?: string;
  rank?: string;
  raw?: boolean;
  reconnectTimeout?: string;
  timestamps?: boolean;
  all?: boolean;
}

/** `logs` with its search options (`--grep`: lib/cli/commands/log-grep.ts). */
export type LogsCommandOptions = LogsOptions & GrepOptions;

/**
 * The task index a TASK argument names: an index (`0`, `1`…, 0-based as everywhere in jobdeck and
 * in SkyPilot's queue) or a task name.
 * @throws CliError NOT_FOUND when the job has no such task (the message names the tasks it has).
 */
export function resolveTask(job: Pick<JobDetail, 'id' | 'tasks'>, raw: string): number {
  const n = job.tasks.length;
  if (/^[0-9]+$/.test(raw.trim())) {
    const i = Number(raw.trim());
    if (i >= n) throw notFoundError(`job ${job.id} has ${n === 1 ? 'only task 0' : `tasks 0–${n - 1}`} (tasks are numbered from 0); there is no task ${i}`);
    return i;
  }
  const byName = job.tasks.filter((t) => t.name === raw);
  if (byName.length === 1) return byName[0].index;
  if (byName.length > 1) throw usageError(`job ${job.id} has ${byName.length} tasks named "${raw}" (${byName.map((t) => t.index).join(', ')}); give the task index`);
  const names = job.tasks.map((t) => `${t.index}${t.name ? ` (${t.name})` : ''}`).join(', ');
  throw notFoundError(`job ${job.id} has no task "${raw}"; its tasks: ${names}`);
}

/** The action of `logs`. Answers the exit code. */
export async function logsAction(ctx: CliContext, idArg: string | undefined, taskArg: string | undefined, opts: LogsCommandOptions): Promise<number> {
  if (opts.grep !== undefined) {
    if (idArg !== undefined || taskArg !== undefined || opts.name !== undefined || opts.all) throw usageError('--grep searches the logs of many jobs: give no job id, TASK, -n or --all with it (select jobs with -s, --jobs-named, --since, --until, --metadata, --owner)');
    return grepAction(ctx, opts);
  }
  const reconnectTimeoutMs = opts.reconnectTimeout === undefined ? undefined : parseDuration(opts.reconnectTimeout, '--reconnect-timeout');
  const client = await ctx.client();
  let jobId: number;
  let task = taskArg;
  if (opts.name !== undefined) {
    if (idArg !== undefined && taskArg !== undefined) throw usageError('with -n NAME, give at most a TASK (not a job id too)');
    task = idArg;
    jobId = (await resolveJobName(client, opts.name, ctx.io.now())).id;
  } else {
    if (idArg === undefined) throw usageError('give a job id (jobdeck logs 7) or a name (jobdeck logs -n NAME)');
    jobId = parseJobId(idArg);
  }
  if (opts.all) {
    if (task !== undefined || opts.attempt !== undefined || opts.rank !== undefined || opts.timestamps) throw usageError('--all prints the whole job as one file; give no TASK, --attempt, --rank or --timestamps with it');
    try {
      await client.download(`/api/jobs/${jobId}/logs/all`, ctx.io.stdout);
    } catch (err) {
      // Removed by the retention policy (the download answers 410): say so with the job's end, as a follow does.
      const job = err instanceof CliError ? await client.get(jobId).catch(() => null) : null;
      if (!job?.logsRemovedAt) throw err;
      ctx.err(logsGoneLines(jobId, logsRemovedText(job.logsRemovedAt), job.status, ctx.errColors).join('\n'));
    }
    return EXIT.OK;
  }
  const job = await client.get(jobId);
  let scope: { task: number; attempt?: number } | undefined;
  if (task !== undefined) scope = { task: resolveTask(job, task) };
  if (opts.attempt !== undefined) {
    const attempt = parseIntArg(opts.attempt, '--attempt', 1);
    if (!scope) {
      if (job.tasks.length !== 1) throw usageError(`--attempt needs a TASK: job ${jobId} is a pipeline of ${job.tasks.length} tasks (jobdeck logs ${jobId} TASK --attempt ${attempt})`);
      scope = { task: 0 };
    }
    const t = job.tasks.find((x) => x.index === scope!.task);
    if (t && attempt > t.attemptList.length && isTerminal('task', t.status)) {
      throw notFoundError(`task ${t.index} of job ${jobId} ended with ${t.attemptList.length} attempt${t.attemptList.length === 1 ? '' : 's'}; there is no attempt ${attempt}`);
    }
    scope.attempt = attempt;
  }
  let rank: number | undefined;
  if (opts.rank !== undefined) {
    rank = parseIntArg(opts.rank, '--rank', 0);
    const most = Math.max(1, ...job.tasks.filter((t) => scope === undefined || t.index === scope.task).map((t) => t.nodes ?? 1));
    if (rank >= most) throw notFoundError(`${scope ? `task ${scope.task} of job ${jobId}` : `job ${jobId}`} runs on ${most === 1 ? 'one node (rank 0 only)' : `at most ${most} nodes (ranks 0–${most - 1})`}; there is no rank ${rank}`);
  }
  return runFollow(ctx, jobId, { scope, follow: opts.follow, raw: opts.raw, reconnectTimeoutMs, rank, timestamps: opts.timestamps });
}

/** Adds `logs` to the program. */
export function addLogs(program: Command, ctx: () => CliContext, run: (fn: () => Promise<number>) => Promise<void>): void {
  program
    .command('logs')
    .summary("follow a job's logs task by task (or print them with --no-follow)")
    .description(
      "Stream a job's logs: every task in order, every attempt of it, marking where each attempt " +
        'starts and how it ended, restarts, the move to the next task, and the final status.\n\n' +
        'Log bytes go to stdout, the markers to stderr. Redirected to a file or a pipe, stdout holds ' +
        'exactly the bytes the job wrote; on a terminal, escape sequences other than colours ' +
        '(window titles, links, cursor moves, screen clears…) are removed unless --raw.\n\n' +
        'Ctrl-C stops following (the job keeps running; exit 5). Following a job that already ' +
        'ended replays it. A multi-node task has one log per node (rank): its lines come ' +
        'interleaved, each prefixed with "[rank K] ", or one rank\'s alone with --rank K. ' +
        'With -t, each line starts with the time it was written (ISO 8601, UTC, ms; a dash ' +
        'where none was recorded). --all prints the whole job as one file, a header line ' +
        'before each attempt (the dashboard\'s "Download whole job").\n\n' +
        'The exit code tells how the job (or the TASK / attempt) ended; ' +
        'with --no-follow it is 0 once the existing logs were printed.',
    )
    .argument('[id]', 'job id (or, with -n, the TASK)')
    .argument('[task]', 'only this task: its index (0, 1, …) or its name')
    .option('-n, --name <name>', 'the job by its name (must match exactly one job)')
    .option('--no-follow', 'print the logs that exist now and exit, even if the job is still running')
    .option('--attempt <k>', 'only attempt K (1-based) of the task')
    .option('--rank <k>', 'only rank K (0-based; 0 is the head) of multi-node tasks, without prefixes')
    .option('--raw', 'on a terminal too, write the log bytes exactly (escape sequences and all)')
    .option('-t, --timestamps', 'prefix each line with the time it was written (ISO 8601, ms)')
    .option('--all', 'print the whole job as one file: every task, attempt and rank under a header line, then exit')
    .option(...RECONNECT_TIMEOUT_OPTION)
    .option('--grep <pattern>', 'search the logs of many jobs for PATTERN (a literal string; exit 1 when nothing matches)')
    .option('-i, --ignore-case', 'with --grep: match in any case')
    .option('--regex', 'with --grep: PATTERN is a regular expression')
    .option('-s, --status <status>', 'with --grep: only jobs in this status (repeatable or comma-separated)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--jobs-named <text>', 'with --grep: only jobs whose name contains TEXT')
    .option('--since <time>', 'with --grep: only jobs submitted at or after this ISO-8601 time or date')
    .option('--until <time>', 'with --grep: only jobs submitted before this ISO-8601 time or date')
    .option('--metadata <key=value>', 'with --grep: only jobs whose metadata has this key with this (string) value (repeatable: all must hold; at most 8)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--owner <name>', 'with --grep: only the jobs this user submitted ("me": yours)')
    .option('--limit <n>', 'with --grep: at most N matches (default 100, at most 1000)')
    .option('--jobs <n>', 'with --grep: search the newest N jobs of the selection (default 200, at most 1000)')
    .action(async (id: string | undefined, task: string | undefined, opts: LogsCommandOptions) => run(() => logsAction(ctx(), id, task, opts)));
}
