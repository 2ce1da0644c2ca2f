/**
 * `jobdeck set-priority ID N`: changes a PENDING job's priority (PATCH /api/jobs/:id); the
 * admission pass reorders its line at once. `jobdeck queues [set NAME … | delete NAME]`: the
 * operator queues (GET/PUT/DELETE /api/queues; docs/design.md §6 "Admission").
 */
import Table from 'cli-table3';
import type { Command } from 'commander';
import type { QueueView } from '../../api/types';
import { formatDuration, parseDuration, PRIORITY, queueNameProblem } from '../../jobs/spec';
import { usageError } from '../errors';
import type { CliContext } from '../context';
import { EXIT } from '../exit-codes';
import { parsePriority } from './launch';
import { PLAIN_CHARS } from './manage';
import { parseJobId } from './resolve';

/** The action of `set-priority`. */
export async function setPriorityAction(ctx: CliContext, id: string, priority: string): Promise<number> {
  const jobId = parseJobId(id);
  const n = parsePriority(priority, 'priority');
  const job = await (await ctx.client()).patch(jobId, { priority: n });
  ctx.out(`Job ${job.id} priority ${job.priority}.`);
  return EXIT.OK;
}

/** Options of `queues set`. */
export interface QueueSetOptions {
  maxRunning?: string;
  maxCpus?: string;
  maxGpus?: string;
  startTimeout?: string;
  defaultPriority?: string;
  memberMaxPriority?: string;
}


/**
 * The `jobdeck queues` table: one row per queue, "-" for no limit; MEMBER CAP is the highest
 * priority a member may give the queue's jobs (its own, or the server's cap when that is lower:
 * `memberMaxPriority`, from the list). A line below says the server's cap when there is one.
 */
export function renderQueues(queues: readonly QueueView[], memberMaxPriority: number | null = null): string {
  const head = ['QUEUE', 'MAX RUNNING', 'MAX CPUS', 'MAX GPUS', 'START TIMEOUT', 'DEFAULT PRIORITY', 'MEMBER CAP', 'PENDING', 'RUNNING', 'CPUS', 'GPUS'];
  const table = new Table({ head, chars: PLAIN_CHARS, style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true } });
  const dash = (v: number | null | undefined) => (v === null || v === undefined ? '-' : String(v));
  const cap = (q: number | null | undefined) => dash(q == null ? memberMaxPriority : memberMaxPriority === null ? q : Math.min(q, memberMaxPriority));
  // An older server answers no GPU fields: "-".
  const timeout = (ms: number | null | undefined) => (ms === null || ms === undefined ? '-' : ms === 0 ? '0s' : formatDuration(ms));
  for (const q of queues) {
    table.push([q.name, dash(q.maxRunning), dash(q.maxCpus), dash(q.maxGpus), timeout(q.startTimeoutMs), dash(q.defaultPriority), cap(q.memberMaxPriority), String(q.pending), String(q.running), String(q.cpus), dash(q.gpus)]);
  }
  const lines = table.toString().split('\n').map((l) => l.replace(/\s+$/, ''));
  if (memberMaxPriority !== null) lines.push('', `Members may give a job priority up to ${memberMaxPriority} (JOBDECK_QUOTA_MEMBER_MAX_PRIORITY), or a queue's lower MEMBER CAP; admins are not capped.`);
  return lines.join('\n');
}

/** A priority given on the command line (0–1000). @throws CliError USAGE naming the flag. */

/** A limit given on the command line: a positive number (`int`: an integer). @throws CliError USAGE. */
function parseLimit(raw: string, flag: string, int: boolean): number {
  const n = Number(raw.trim());
  if (raw.trim() === '' || !Number.isFinite(n) || n <= 0 || (int && !Number.isInteger(n))) throw usageError(`${flag} ${JSON.stringify(raw)}: expected ${int ? 'an integer ≥ 1' : 'a number > 0'}`);
  return n;
}

/** `--start-timeout`: a duration (`30m`, `2h`, `1d`) or `0` (a job that cannot start at once ends). @throws CliError USAGE. */
function parseStartTimeout(raw: string): number {
  if (raw.trim() === '0') return 0;
  const ms = parseDuration(raw);
  if (typeof ms === 'string') throw usageError(`--start-timeout ${JSON.stringify(raw)}: ${ms}, or 0`);
  return ms;
}

/** The action of `queues` (list), `queues set` and `queues delete`. */
export async function queuesAction(ctx: CliContext, verb: 'list' | 'set' | 'delete', name: string | undefined, opts: QueueSetOptions & { json?: boolean }): Promise<number> {
  const client = await ctx.client();
  if (verb === 'list') {
    const { queues, memberMaxPriority } = await client.queues();
    ctx.out(opts.json ? JSON.stringify(queues, null, 2) : renderQueues(queues, memberMaxPriority ?? null));
    return EXIT.OK;
  }
  const problem = queueNameProblem(name);
  if (problem) throw usageError(`queue ${JSON.stringify(name ?? '')}: ${problem}`);
  if (verb === 'delete') {
    await client.deleteQueue(name!);
    ctx.out(`Queue ${name} deleted.`);
    return EXIT.OK;
  }
  const body: { maxRunning?: number; maxCpus?: number; maxGpus?: number; startTimeoutMs?: number; defaultPriority?: number; memberMaxPriority?: number } = {};
  if (opts.maxRunning !== undefined) body.maxRunning = parseLimit(opts.maxRunning, '--max-running', true);
  if (opts.maxCpus !== undefined) body.maxCpus = parseLimit(opts.maxCpus, '--max-cpus', false);
  if (opts.maxGpus !== undefined) body.maxGpus = parseLimit(opts.maxGpus, '--max-gpus', false);
  if (opts.startTimeout !== undefined) body.startTimeoutMs = parseStartTimeout(opts.startTimeout);
  if (opts.defaultPriority !== undefined) body.defaultPriority = parsePriority(opts.defaultPriority, '--default-priority');
  if (opts.memberMaxPriority !== undefined) body.memberMaxPriority = parsePriority(opts.memberMaxPriority, '--member-max-priority');
  const q = await client.putQueue(name!, body);
  ctx.out(renderQueues([q]));
  return EXIT.OK;
}

/** Adds `set-priority` and `queues` to the program. */
export function addScheduling(program: Command, ctx: () => CliContext, run: (fn: () => Promise<number>) => Promise<void>): void {
  program
    .command('set-priority')
    .summary("change a pending job's priority")
    .description(
      `Set the admission priority (${PRIORITY.min}–${PRIORITY.max}; higher starts first, FIFO within a priority) of a job ` +
        'that is still PENDING. A job that already started or ended is refused (exit 10), and so is a ' +
        "priority above a member's cap (`jobdeck queues` shows it).",
    )
    .argument('<id>', 'job id')
    .argument('<priority>', `${PRIORITY.min}–${PRIORITY.max}`)
    .action(async (id: string, priority: string) => run(() => setPriorityAction(ctx(), id, priority)));

  const queues = program
    .command('queues')
    .summary('list the queues; set or delete one (operator)')
    .description(
      'The operator queues: a job names one with `queue:` in its spec. A queue may limit its running jobs, ' +
        'CPUs and GPUs at once, give a default priority and a start timeout of its own, and cap the priority ' +
        'members may give its jobs; the default queue has no limits of its own.',
    )
    .option('--json', 'print the queues as JSON (the API QueueList.queues)')
    .action(async (opts: { json?: boolean }) => run(() => queuesAction(ctx(), 'list', undefined, opts)));
  queues
    .command('set')
    .summary('create or replace a queue (an option left out is no limit)')
    .description('Create queue NAME, or replace its settings: an option left out is no limit (admins).')
    .argument('<name>', 'queue name (a–z, 0–9, - and _)')
    .option('--max-running <N>', 'jobs of the queue running at once')
    .option('--max-cpus <N>', 'CPUs its running jobs hold at once')
    .option('--max-gpus <N>', 'GPUs its running jobs hold at once (a share of one GPU counts as its fraction)')
    .option('--start-timeout <DURATION>', "a job of the queue that cannot start within this (30m, 2h, 1d; 0: at once) ends FAILED_NO_RESOURCE; left out: the server's")
    .option('--default-priority <N>', `priority of a job of the queue that gives none (${PRIORITY.min}–${PRIORITY.max})`)
    .option('--member-max-priority <N>', `highest priority a member may give the queue's jobs (${PRIORITY.min}–${PRIORITY.max}; admins are not capped)`)
    .action(async (name: string, opts: QueueSetOptions) => run(() => queuesAction(ctx(), 'set', name, opts)));
  queues
    .command('delete')
    .summary('delete a queue (refused while unfinished jobs are in it)')
    .description('Delete queue NAME (admins): refused while a job that has not finished is in it (exit 10).')
    .argument('<name>', 'queue name')
    .action(async (name: string) => run(() => queuesAction(ctx(), 'delete', name, {})));
}
