/**
 * `jobdeck set-priority ID N`: changes a PENDING job's priority (PATCH /api/jobs/:id); the
 * admission pass reorders its line at once. `jobdeck queues [set NAME … | delete NAME]`: the
 * operator queues (GET/PUT/DELETE /api/queues; docs/design.md §6 "Admission").
 */
import Table from 'cli-table3';
import type { Command } from 'commander';
import type { QueueView } from '../../api/types';
import { PRIORITY, queueNameProblem } from '../../jobs/spec';
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
  defaultPriority?: string;
}


/** The `jobdeck queues` table: one row per queue, "-" for no limit. */
export function renderQueues(queues: readonly QueueView[]): string {
  const table = new Table({ head: ['QUEUE', 'MAX RUNNING', 'MAX CPUS', 'DEFAULT PRIORITY', 'PENDING', 'RUNNING', 'CPUS'], chars: PLAIN_CHARS, style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true } });
  const dash = (v: number | null) => (v === null ? '-' : String(v));
  for (const q of queues) table.push([q.name, dash(q.maxRunning), dash(q.maxCpus), dash(q.defaultPriority), String(q.pending), String(q.running), String(q.cpus)]);
  return table.toString().split('\n').map((l) => l.replace(/\s+$/, '')).join('\n');
}

/** A limit given on the command line: a positive number (`int`: an integer). @throws CliError USAGE. */
function parseLimit(raw: string, flag: string, int: boolean): number {
  const n = Number(raw.trim());
  if (raw.trim() === '' || !Number.isFinite(n) || n <= 0 || (int && !Number.isInteger(n))) throw usageError(`${flag} ${JSON.stringify(raw)}: expected ${int ? 'an integer ≥ 1' : 'a number > 0'}`);
  return n;
}

/** The action of `queues` (list), `queues set` and `queues delete`. */
export async function queuesAction(ctx: CliContext, verb: 'list' | 'set' | 'delete', name: string | undefined, opts: QueueSetOptions & { json?: boolean }): Promise<number> {
  const client = await ctx.client();
  if (verb === 'list') {
    const { queues } = await client.queues();
    ctx.out(opts.json ? JSON.stringify(queues, null, 2) : renderQueues(queues));
    return EXIT.OK;
  }
  const problem = queueNameProblem(name);
  if (problem) throw usageError(`queue ${JSON.stringify(name ?? '')}: ${problem}`);
  if (verb === 'delete') {
    await client.deleteQueue(name!);
    ctx.out(`Queue ${name} deleted.`);
    return EXIT.OK;
  }
  const body: { maxRunning?: number; maxCpus?: number; defaultPriority?: number } = {};
  if (opts.maxRunning !== undefined) body.maxRunning = parseLimit(opts.maxRunning, '--max-running', true);
  if (opts.maxCpus !== undefined) body.maxCpus = parseLimit(opts.maxCpus, '--max-cpus', false);
  if (opts.defaultPriority !== undefined) body.defaultPriority = parsePriority(opts.defaultPriority, '--default-priority');
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
      `Set the admission priority (${PRIORITY.min}–${PRIORITY.max}; higher starts first, FIFO within a priority) of a job\n` +
        'that is still PENDING. A job that already started or ended is refused (exit 10).',
    )
    .argument('<id>', 'job id')
    .argument('<priority>', `${PRIORITY.min}–${PRIORITY.max}`)
    .action(async (id: string, priority: string) => run(() => setPriorityAction(ctx(), id, priority)));

  const queues = program
    .command('queues')
    .summary('list the queues; set or delete one (operator)')
    .description(
      'The operator queues: a job names one with `queue:` in its spec. A queue may limit its running jobs\n' +
        'and CPUs at once and give a default priority; the default queue has no limits of its own.',
    )
    .option('--json', 'print the queues as JSON (the API QueueList.queues)')
    .action(async (opts: { json?: boolean }) => run(() => queuesAction(ctx(), 'list', undefined, opts)));
  queues
    .command('set')
    .summary('create or replace a queue (an option left out is no limit)')
    .argument('<name>', 'queue name (a–z, 0–9, - and _)')
    .option('--max-running <N>', 'jobs of the queue running at once')
    .option('--max-cpus <N>', 'CPUs its running jobs hold at once')
    .option('--default-priority <N>', `priority of a job of the queue that gives none (${PRIORITY.min}–${PRIORITY.max})`)
    .action(async (name: string, opts: QueueSetOptions) => run(() => queuesAction(ctx(), 'set', name, opts)));
  queues
    .command('delete')
    .summary('delete a queue (refused while unfinished jobs are in it)')
    .argument('<name>', 'queue name')
    .action(async (name: string) => run(() => queuesAction(ctx(), 'delete', name, {})));
}
