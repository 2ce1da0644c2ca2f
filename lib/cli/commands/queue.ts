/**
 * `jobdeck queue [-a] [-s STATUS]… [--name TEXT] [--since T] [--until T] [--metadata K=V]… [--label K=V]… [--json] [--limit N]`:
 * the job table (SkyPilot `sky jobs queue`). Default view: every job not yet terminal plus the
 * jobs that ended in the last 24 hours (so a job that just failed is still there); `-a` shows
 * every job; `-s` shows only the given statuses, `--name` / `--since` / `--until` / `--metadata` /
 * `--label` only the jobs of that search (each implies -a). The search is GET /api/jobs's (`q`,
 * `submittedAfter`, `submittedBefore`, `metadata=key:value`, `label=key=value`): the dashboard list's query path,
 * answered from indexes.
 */
import type { Command } from 'commander';
import type { GroupSummary, JobSummary } from '../../api/types';
import { helpSection } from '../help';
import { JOB_STATUSES, JOB_TERMINAL, isTerminal } from '../../jobs/status';
import type { CliContext } from '../context';
import { usageError } from '../errors';
import { EXIT } from '../exit-codes';
import { queueJson, renderQueueTable } from '../queue-render';
import { parseIntArg } from './resolve';

/** How long a finished job stays in the default view (ms). */
export const RECENT_MS = 24 * 3600 * 1000;
/** Default number of jobs shown. */
export const DEFAULT_QUEUE_LIMIT = 100;

/** Options of `queue` as commander parses them. */
export interface QueueOptions {
  all?: boolean;
  status: string[];
  json?: boolean;
  limit?: string;
  name?: string;
  since?: string;
  until?: string;
  /** Only this submitter's jobs ("me" or a user name). */
  owner?: string;
  /** `key=value` pairs the job's metadata must all hold (repeatable). */
  metadata: string[];
  /** List a group's jobs one by one instead of its one row. */
  expand?: boolean;
  /** `key=value` labels (`resources.labels`) the job's tasks must all carry (repeatable). */
  label?: string[];
}

/**
 * `--label key=value` values as GET /api/jobs's `label=key=value` (the server checks the key and
 * the bounds, naming them).
 * @throws CliError USAGE for a value without `=` or without a key.
 */
export function parseLabelPairs(values: readonly string[]): string[] {
  for (const v of values) if (v.indexOf('=') < 1) throw usageError(`--label: expected key=value, got "${v.slice(0, 80)}"`);
  return [...values];
}

/**
 * `--metadata key=value` values as GET /api/jobs's `metadata=key:value` (split at the first `=`;
 * the server bounds the count and the lengths).
 * @throws CliError USAGE for a value without `=` or without a key.
 */
export function parseMetadataPairs(values: readonly string[]): string[] {
  return values.map((v) => {
    const at = v.indexOf('=');
    if (at < 1) throw usageError(`--metadata: expected key=value, got "${v.slice(0, 80)}"`);
    return `${v.slice(0, at)}:${v.slice(at + 1)}`;
  });
}

/**
 * Parses `-s` values (case-insensitive; commas allowed: `-s running,pending`).
 * @throws CliError USAGE naming the valid statuses.
 */
export function parseStatuses(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const v of values.flatMap((x) => x.split(','))) {
    const s = v.trim().toUpperCase();
    if (!s) continue;
    if (!(JOB_STATUSES as readonly string[]).includes(s)) throw usageError(`unknown status "${v.trim()}"; valid statuses: ${JOB_STATUSES.join(', ')}`);
    if (!out.includes(s)) out.push(s);
  }
  return out;
}

/**
 * An `--owner` value: "me" or a user name (as GET /api/jobs `owner` takes it); undefined stays undefined.
 * @throws CliError USAGE for anything else.
 */
export function parseOwner(v: string | undefined): string | undefined {
  if (v !== undefined && !/^[a-z0-9][a-z0-9._-]{0,62}$/.test(v)) throw usageError('--owner: expected "me" or a user name (a–z, 0–9, ., - and _)');
  return v;
}

/** Keeps the jobs of the default view: not terminal, or ended within RECENT_MS of `now`. */
export function defaultView(jobs: readonly JobSummary[], now: Date): JobSummary[] {
  return jobs.filter((j) => !isTerminal('job', j.status) || (j.endedAt != null && now.getTime() - new Date(j.endedAt).getTime() <= RECENT_MS));
}

/** The action of `queue`. */
export async function queueAction(ctx: CliContext, opts: QueueOptions): Promise<number> {
  const limit = opts.limit !== undefined ? parseIntArg(opts.limit, '--limit', 1) : DEFAULT_QUEUE_LIMIT;
  const statuses = parseStatuses(opts.status);
  const owner = parseOwner(opts.owner);
  const client = await ctx.client();
  const now = ctx.io.now();
  let jobs: JobSummary[];
  let more = false;
  /** What the list holds, for the footer ("Showing 3 jobs: …") and the empty case. */
  let view: string;
  const metadata = parseMetadataPairs(opts.metadata ?? []);
  const label = parseLabelPairs(opts.label ?? []);
  const search = { q: opts.name, submittedAfter: opts.since, submittedBefore: opts.until, metadata: metadata.length ? metadata : undefined, label: label.length ? label : undefined };
  const searching = !!(opts.name || opts.since || opts.until || metadata.length || label.length);
  if (statuses.length || opts.all || searching) {
    const r = await client.listAll({ status: statuses.length ? statuses : undefined, ...search, owner }, limit);
    jobs = r.jobs;
    more = r.more;
    view = [statuses.length ? `with status ${statuses.join(', ')}` : '', opts.name ? `named *${opts.name}*` : '', opts.since ? `submitted since ${opts.since}` : '', opts.until ? `submitted before ${opts.until}` : '', metadata.length ? `with metadata ${(opts.metadata ?? []).join(', ')}` : '', label.length ? `labelled ${label.join(', ')}` : ''].filter(Boolean).join(', ') || 'all';
  } else {
    // Two reads: every live job, and the newest finished ones (filtered to the last 24 h).
    const live = await client.listAll({ status: JOB_STATUSES.filter((s) => !JOB_TERMINAL.has(s)), owner }, limit);
    const done = await client.list({ status: [...JOB_TERMINAL], owner, limit: Math.min(limit, 200) });
    const byId = new Map<number, JobSummary>();
    for (const j of [...live.jobs, ...defaultView(done.jobs, now)]) byId.set(j.id, j);
    const merged = [...byId.values()].sort((a, b) => b.id - a.id);
    jobs = merged.slice(0, limit);
    more = live.more || merged.length > limit;
    view = 'unfinished, or finished in the last 24 h (-a: all jobs)';
  }
  if (opts.json) {
    ctx.out(queueJson(jobs));
    return EXIT.OK;
  }
  const dim = ctx.errColors.dim;
  if (!jobs.length) {
    ctx.err(dim(`No jobs (${view}).`));
    return EXIT.OK;
  }
  // A group (array, sweep) is one row: its progress over all its slots, read once per group shown.
  const groups = new Map<number, GroupSummary>();
  if (!opts.expand) for (const id of new Set(jobs.flatMap((j) => (j.group ? [j.group.id] : [])))) groups.set(id, await client.group(id));
  ctx.out(renderQueueTable(jobs, now, ctx.outColors, groups));
  const folded = groups.size ? ` in ${groups.size} group${groups.size === 1 ? '' : 's'} folded (--expand: each job)` : '';
  ctx.err(dim(`Showing ${jobs.length} job${jobs.length === 1 ? '' : 's'}${folded} (${view})${more ? `; more exist: --limit ${limit * 2}` : ''}.`));
  return EXIT.OK;
}

/** Adds `queue` to the program. */
export function addQueue(program: Command, ctx: () => CliContext, run: (fn: () => Promise<number>) => Promise<void>): void {
  program
    .command('queue')
    .summary('list jobs with their tasks (like `sky jobs queue`)')
    .description(
      'The jobs, newest first, one row each; a pipeline shows one indented row per task (like `sky jobs queue`). ' +
        'Columns: ID, TASK, NAME, SUBMITTED, TOT. DURATION (submitted → end), JOB DURATION (started → end), ' +
        '#RESTARTS (the budget\'s, then "+N on exit code" for recover_on_exit_codes and "+N recov." for attempts ' +
        'the executor lost), PRIORITY, STATUS, PLACE, WAITING, OWNER, NODES (where the task\'s latest attempt runs or ran).\n\n' +
        'By default: the jobs that have not finished, plus those that finished in the last 24 h.',
    )
    .addHelpText(
      'after',
      helpSection('Columns', [
        ['ID, TASK, NAME', 'the job; a pipeline\'s tasks below it (↳, the task index)'],
        ['SUBMITTED', 'when it was submitted'],
        ['TOT. DURATION', 'from its submission to its end (or now)'],
        ['JOB DURATION', 'from its start to its end (or now)'],
        ['#RESTARTS', 'restarts after its own failures (recoveries as "+n recov.")'],
        ['PRIORITY, STATUS', 'its admission priority (0–1000) and status'],
        ['PLACE', 'a waiting job\'s place in line: #3 · q2 is third in line, second in its queue'],
        ['WAITING', 'why it waits (the note on its start timeout left out), or when a restart starts'],
        ['OWNER', 'who submitted it'],
      ]),
    )
    .option('-a, --all', 'show every job, finished ones included')
    .option('-s, --status <status>', `only jobs in this status (repeatable or comma-separated): ${JOB_STATUSES.join(', ')}`, (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--name <text>', 'only jobs whose name contains this text (case-insensitive; a number also matches that job id)')
    .option('--since <time>', 'only jobs submitted at or after this ISO-8601 time or date (2026-12-01, 2026-12-01T08:00:00Z)')
    .option('--until <time>', 'only jobs submitted before this ISO-8601 time or date')
    .option('--metadata <key=value>', "only jobs whose metadata has this key with this (string) value (repeatable: all must hold; at most 8)", (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--label <key=value>', 'only jobs whose tasks carry this label (resources.labels; repeatable: all must hold; at most 8)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--json', 'print the jobs as JSON (an array of the API JobSummary: id, name, status, tasks[index, name, status, attempts, …])')
    .option('--limit <n>', `show at most N jobs, newest first (default ${DEFAULT_QUEUE_LIMIT})`)
    .option('--owner <name>', 'only the jobs this user submitted ("me": yours)')
    .option('--expand', "list a group's jobs one by one (default: a group — an array or sweep — is one row, gID, with its progress)")
    .action(async (opts: QueueOptions) => run(() => queueAction(ctx(), opts)));
}
