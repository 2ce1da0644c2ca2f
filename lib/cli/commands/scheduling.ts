/**
 * `jobdeck set-priority ID N`: changes a PENDING job's priority (PATCH /api/jobs/:id); the
 * admission pass reorders its line at once (docs/design.md §6 "Admission").
 */
import type { Command } from 'commander';
import { PRIORITY } from '../../jobs/spec';
import type { CliContext } from '../context';
import { EXIT } from '../exit-codes';
import { parsePriority } from './launch';
import { parseJobId } from './resolve';

/** The action of `set-priority`. */
export async function setPriorityAction(ctx: CliContext, id: string, priority: string): Promise<number> {
  const jobId = parseJobId(id);
  const n = parsePriority(priority, 'priority');
  const job = await (await ctx.client()).patch(jobId, { priority: n });
  ctx.out(`Job ${job.id} priority ${job.priority}.`);
  return EXIT.OK;
}

/** Adds `set-priority` to the program. */
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
}
