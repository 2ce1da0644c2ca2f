/**
 * `jobdeck groups show|cancel|rerun-failed|delete G` (arrays and sweeps, docs/design.md §17) and
 * `jobdeck schedules list|show|create|update|pause|resume|run|delete` (docs/design.md §19), over
 * /api/groups and /api/schedules. docs/cli.md has each verb.
 */
import type { Command } from 'commander';
import type { CancelResult, GroupDetail, ScheduleView } from '../../api/types';
import { CATCH_UP_RULES, OVERLAP_POLICIES, SCHEDULE_NAME } from '../../jobs/schedule';
import type { ScheduleRequest } from '../client';
import type { CliContext } from '../context';
import { usageError } from '../errors';
import { EXIT } from '../exit-codes';
import { colorStatus, formatAgo } from '../format';
import { groupProgress } from '../queue-render';
import { readSpecFile } from '../../../clients/ts/src';
import { local } from './launch';
import { parseIntArg } from './resolve';

/** `jobdeck groups VERB G`. */
export async function groupsAction(ctx: CliContext, verb: 'show' | 'cancel' | 'rerun-failed' | 'delete', idArg: string, o: { json?: boolean }): Promise<number> {
  const id = parseIntArg(idArg, 'group id', 1);
  const client = await ctx.client();
  if (verb === 'show') {
    const g = await client.group(id);
    if (o.json) return ctx.out(JSON.stringify(g, null, 2)), EXIT.OK;
    ctx.out(groupText(g, ctx));
    return EXIT.OK;
  }
  if (verb === 'cancel') {
    const r = await client.groupAction<CancelResult>(id, 'cancel');
    if (o.json) return ctx.out(JSON.stringify(r, null, 2)), EXIT.OK;
    ctx.out(`Group ${id}: ${r.cancelled.length} job(s) cancelled, ${r.cancelling.length} being cancelled${r.alreadyTerminal.length ? `, ${r.alreadyTerminal.length} already finished` : ''}.`);
    return EXIT.OK;
  }
  if (verb === 'rerun-failed') {
    const r = await client.groupAction<{ rerun: Array<{ index: number; from: number; jobId: number }> }>(id, 'rerun-failed');
    if (o.json) return ctx.out(JSON.stringify(r, null, 2)), EXIT.OK;
    if (!r.rerun.length) ctx.out(`Group ${id}: no slot ended without succeeding; nothing re-run.`);
    for (const x of r.rerun) ctx.out(`Job submitted, ID: ${x.jobId} (slot ${x.index} of group ${id}, a re-run of job ${x.from})`);
    return EXIT.OK;
  }
  const r = await client.groupAction<{ deleted: number[] }>(id, 'delete');
  if (o.json) return ctx.out(JSON.stringify(r, null, 2)), EXIT.OK;
  ctx.out(`Group ${id} deleted (${r.deleted.length} job${r.deleted.length === 1 ? '' : 's'}).`);
  return EXIT.OK;
}

/** A group as `jobdeck groups show` prints it: a header line, its progress, one line per slot. */
function groupText(g: GroupDetail, ctx: CliContext): string {
  const params = Object.entries(g.array.params)
    .map(([k, v]) => `${k}=${v.join(',')}`)
    .join(' ');
  const lines = [`Group ${g.id}  ${g.name}  (${g.size} jobs${params ? `; ${params}` : ''}${g.array.numJobs > 1 ? `; ${g.array.numJobs} per combination` : ''})  by ${g.owner ?? '-'}  submitted ${formatAgo(g.submittedAt, ctx.io.now())}`, groupProgress(g)];
  for (const s of g.slots) lines.push(`  ${String(s.index).padStart(String(g.size).length)}  job ${s.jobId}  ${colorStatus(s.status, ctx.outColors)}  ${s.name}${s.runs > 1 ? `  (run ${s.runs})` : ''}`);
  return lines.join('\n');
}

/** Options of `schedules create` / `update`. */
export interface ScheduleOptions {
  cron?: string;
  tz?: string;
  file?: string;
  job?: string;
  overlap?: string;
  catchUp?: string;
  paused?: boolean;
  json?: boolean;
}

/** The body of a create or update from the flags. @throws CliError USAGE */
async function scheduleBody(ctx: CliContext, o: ScheduleOptions): Promise<ScheduleRequest> {
  const b: ScheduleRequest = {};
  if (o.cron !== undefined) b.cron = o.cron;
  if (o.tz !== undefined) b.timezone = o.tz;
  if (o.file !== undefined && o.job !== undefined) throw usageError('give a job file or --job, not both');
  if (o.file !== undefined) {
    b.yaml = await local(readSpecFile(o.file, ctx.io.cwd));
    b.filename = o.file;
  }
  if (o.job !== undefined) b.jobId = parseIntArg(o.job, '--job', 1);
  if (o.overlap !== undefined) {
    if (!(OVERLAP_POLICIES as readonly string[]).includes(o.overlap)) throw usageError(`--overlap ${JSON.stringify(o.overlap)}: expected one of ${OVERLAP_POLICIES.join(', ')}`);
    b.overlap = o.overlap as ScheduleRequest['overlap'];
  }
  if (o.catchUp !== undefined) {
    if (!(CATCH_UP_RULES as readonly string[]).includes(o.catchUp)) throw usageError(`--catch-up ${JSON.stringify(o.catchUp)}: expected one of ${CATCH_UP_RULES.join(', ')}`);
    b.catchUp = o.catchUp as ScheduleRequest['catchUp'];
  }
  if (o.paused) b.paused = true;
  return b;
}

function scheduleLine(s: ScheduleView): string {
  const what = s.jobId !== null ? `re-runs job ${s.jobId}` : 'a spec';
  const next = s.paused ? 'paused' : s.nextFireAt ? `next ${s.nextFireAt}` : 'no next fire';
  return `${s.name}  "${s.cron}" ${s.timezone}  ${what}  overlap ${s.overlap}, catch-up ${s.catchUp}  ${next}  last ${s.lastFireAt ?? '-'}${s.lastJobId ? ` (job ${s.lastJobId})` : ''}${s.lastOutcome && s.lastOutcome !== 'submitted' ? ` ${s.lastOutcome}` : ''}  by ${s.owner ?? '-'}`;
}

function checkName(name: string): string {
  if (!SCHEDULE_NAME.test(name)) throw usageError(`schedule name ${JSON.stringify(name)}: 1–63 characters: a–z, 0–9, - and _, starting with a letter or digit`);
  return name;
}

/** `jobdeck schedules VERB [NAME]`. */
export async function schedulesAction(ctx: CliContext, verb: 'list' | 'show' | 'create' | 'update' | 'pause' | 'resume' | 'run' | 'delete', nameArg: string | undefined, o: ScheduleOptions & { mine?: boolean }): Promise<number> {
  const client = await ctx.client();
  const print = (s: ScheduleView, line: string) => ctx.out(o.json ? JSON.stringify(s, null, 2) : line);
  if (verb === 'list') {
    const { schedules } = await client.schedules(o.mine);
    if (o.json) return ctx.out(JSON.stringify(schedules, null, 2)), EXIT.OK;
    if (!schedules.length) ctx.err(ctx.errColors.dim('No schedules.'));
    for (const s of schedules) ctx.out(scheduleLine(s));
    return EXIT.OK;
  }
  const name = checkName(nameArg ?? '');
  switch (verb) {
    case 'show': {
      const s = await client.schedule(name);
      const fires = s.fires.map((f) => `  ${f.fireAt}  ${f.kind.padEnd(8)}  ${f.outcome.padEnd(9)}  ${f.jobId ? `job ${f.jobId}` : '-'}${f.detail ? `  ${f.detail}` : ''}`);
      print(s, [scheduleLine(s), ...(fires.length ? ['Fires (newest first):', ...fires] : ['No fires yet.'])].join('\n'));
      return EXIT.OK;
    }
    case 'create': {
      if (!o.cron) throw usageError('schedules create needs --cron "EXPR"');
      if (o.file === undefined && o.job === undefined) throw usageError('schedules create needs a job file (-f FILE) or a job to re-run (--job ID)');
      const s = await client.putSchedule({ name, ...(await scheduleBody(ctx, o)) });
      print(s, `Schedule ${s.name} created: ${s.nextFireAt ? `next fire ${s.nextFireAt}` : 'paused'}.`);
      return EXIT.OK;
    }
    case 'update': {
      const s = await client.putSchedule(await scheduleBody(ctx, o), name);
      print(s, `Schedule ${s.name} updated: ${s.paused ? 'paused' : `next fire ${s.nextFireAt ?? '-'}`}.`);
      return EXIT.OK;
    }
    case 'pause':
    case 'resume': {
      const s = await client.scheduleAction<ScheduleView>(name, verb);
      print(s, verb === 'pause' ? `Schedule ${name} paused.` : `Schedule ${name} resumed: next fire ${s.nextFireAt ?? '-'}.`);
      return EXIT.OK;
    }
    case 'run': {
      const r = await client.scheduleAction<{ outcome: string; jobId: number | null; detail: string | null }>(name, 'run');
      if (o.json) return ctx.out(JSON.stringify(r, null, 2)), EXIT.OK;
      if (r.jobId) ctx.out(`Job submitted, ID: ${r.jobId} (schedule ${name}, run now)`);
      else ctx.err(`Schedule ${name}: ${r.outcome}${r.detail ? ` — ${r.detail}` : ''}`);
      return r.outcome === 'error' ? EXIT.REFUSED : EXIT.OK;
    }
    case 'delete':
      await client.scheduleAction<unknown>(name, 'delete');
      ctx.out(`Schedule ${name} deleted (its jobs stay).`);
      return EXIT.OK;
  }
  return EXIT.OK;
}

/** Adds `groups` and `schedules` to the program. */
export function addFlow(program: Command, ctx: () => CliContext, run: (fn: () => Promise<number>) => Promise<void>): void {
  const g = program.command('groups').summary('arrays and sweeps: show, cancel, rerun-failed, delete a group of jobs').description('A group is the jobs one `launch --num-jobs/--param` submitted. jobdeck queue shows it as one row (gID).');
  for (const [verb, summary, description] of [
    ['show', 'the group, its progress and the latest job of each slot', 'Show group G: its name, size and parameters, its progress, and the latest job of each slot (a re-run takes its slot).'],
    ['cancel', 'cancel every job of the group not finished yet', 'Cancel every job of group G that did not finish yet; the jobs that ended stay as they are.'],
    ['rerun-failed', 'a new job in each slot that ended without succeeding', 'Re-run each slot of group G whose latest job ended without succeeding: a new job in that slot, with its parameters.'],
    ['delete', 'delete the group and all its jobs (none may be running)', 'Delete group G and all its jobs, logs included; refused while a job of it is not finished.'],
  ] as const) {
    g.command(verb).summary(summary).description(description).argument('<group>', 'group id').option('--json', 'print JSON').action(async (id: string, o: { json?: boolean }) => run(() => groupsAction(ctx(), verb, id, o)));
  }
  const s = program
    .command('schedules')
    .summary('jobs on a cron schedule: list, show, create, update, pause, resume, run, delete')
    .description('A schedule submits a spec (or re-runs a job) on a cron expression, as its owner.')
    .action(async () => run(() => schedulesAction(ctx(), 'list', undefined, {})));
  s.command('list').summary('every schedule, its next and last fire').description('Every schedule (yours with --mine): its cron expression and time zone, whether it is paused, its next fire and its last one.').option('--mine', 'only yours').option('--json', 'print JSON').action(async (o: { mine?: boolean; json?: boolean }) => run(() => schedulesAction(ctx(), 'list', undefined, o)));
  const fields = (c: Command, create: boolean) =>
    c
      .argument('<name>', 'schedule name (a–z, 0–9, - and _)')
      .option('--cron <expr>', `cron expression, 5 fields: minute hour day month weekday ("0 3 * * *")${create ? ' (required)' : ''}`)
      .option('--tz <zone>', 'IANA time zone the expression is read in (default UTC)')
      .option('-f, --file <job.yaml>', 'the spec to submit at each fire')
      .option('--job <id>', 'instead of a file: re-run this job at each fire')
      .option('--overlap <policy>', `while an earlier run is live: ${OVERLAP_POLICIES.join(' | ')} (default skip)`)
      .option('--catch-up <rule>', `after downtime: ${CATCH_UP_RULES.join(' | ')} — run the last missed time once, or none (default last)`)
      .option('--paused', 'create it paused')
      .option('--json', 'print JSON');
  fields(s.command('create').summary('create a schedule you own').description('Create schedule NAME, owned by you: at each time of --cron (in --tz) it submits the spec of --file, or re-runs the job of --job, with your rights.'), true).action(async (name: string, o: ScheduleOptions) => run(() => schedulesAction(ctx(), 'create', name, o)));
  fields(s.command('update').summary('change a schedule (the flags given)').description('Change schedule NAME: only what the flags given say; its next fire is computed again.'), false).action(async (name: string, o: ScheduleOptions) => run(() => schedulesAction(ctx(), 'update', name, o)));
  for (const [verb, summary, description] of [
    ['show', 'a schedule and its latest fires', 'Show schedule NAME and its latest fires: when, what kind, and what came of each.'],
    ['pause', 'no fire until resumed', 'Pause schedule NAME: it fires no more until resumed.'],
    ['resume', 'fire again from the next cron time', 'Resume schedule NAME from its next cron time; the times that passed while it was paused do not run.'],
    ['run', 'fire it now (its overlap policy applies)', 'Fire schedule NAME now, once (its overlap policy applies); its next cron time stays as it was.'],
    ['delete', 'delete it (its jobs stay)', 'Delete schedule NAME; the jobs it submitted stay.'],
  ] as const) {
    s.command(verb).summary(summary).description(description).argument('<name>', 'schedule name').option('--json', 'print JSON').action(async (name: string, o: { json?: boolean }) => run(() => schedulesAction(ctx(), verb, name, o)));
  }
}
