/**
 * `jobdeck launch FILE.yaml | --cmd "…"`: submits a job (POST /api/jobs), prints
 * `Job submitted, ID: N`, then follows it like `jobdeck logs N` unless `--detach`.
 * `jobdeck rerun ID [--env K=V]… [--priority N] [-n NAME]`: submits job ID again as it was
 * submitted, those changed (POST /api/jobs/:id/rerun), then the same.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Command } from 'commander';
import { BadRequestError, readSpecFile, resolveTaskFile } from '../../../clients/ts/src';
import { formatIssues, type SubmitRequest } from '../client';
import type { CliContext } from '../context';
import { usageError } from '../errors';
import { EXIT } from '../exit-codes';
import { RECONNECT_TIMEOUT_OPTION, runFollow } from './follow-job';
import { parseDuration, parseIntArg, parseJobId } from './resolve';
import { AFTER_MODES, ARRAY_LIMITS, parseParamFlag, PRIORITY, PRIORITY_EXPECTED, priorityProblem, QUEUE_NAME_EXPECTED, queueNameProblem } from '../../jobs/spec';

/** Options of `launch` as commander parses them. */
export interface LaunchOptions {
  cmd?: string;
  name?: string;
  env: string[];
  secret: string[];
  detach?: boolean;
  submissionId?: string;
  raw?: boolean;
  reconnectTimeout?: string;
  priority?: string;
  queue?: string;
  /** `--num-jobs N`: an array (SkyPilot's flag). */
  numJobs?: string;
  /** `--param NAME=v1,v2` (repeatable): a sweep over the product. */
  param: string[];
  /** `--depends-on ID|NAME` (repeatable or comma-separated). */
  dependsOn: string[];
  /** `--after ok|failed|any`. */
  after?: string;
}

/**
 * The array, sweep and dependency flags of `launch` as the submit's fields (numJobs, params,
 * dependsOn; docs/cli.md "launch").
 * @throws CliError USAGE for a malformed value.
 */
export function flowFields(opts: Pick<LaunchOptions, 'numJobs' | 'param' | 'dependsOn' | 'after'>): Pick<SubmitRequest, 'numJobs' | 'params' | 'dependsOn'> {
  const out: Pick<SubmitRequest, 'numJobs' | 'params' | 'dependsOn'> = {};
  if (opts.numJobs !== undefined) {
    out.numJobs = parseIntArg(opts.numJobs, '--num-jobs', 1);
    if (out.numJobs > ARRAY_LIMITS.maxJobs) throw usageError(`--num-jobs must be at most ${ARRAY_LIMITS.maxJobs}, got ${out.numJobs}`);
  }
  if (opts.param?.length) {
    out.params = {};
    for (const flag of opts.param) {
      let parsed: [string, string[]];
      try {
        parsed = parseParamFlag(flag);
      } catch (err) {
        throw usageError((err as Error).message);
      }
      if (Object.hasOwn(out.params, parsed[0])) throw usageError(`--param ${parsed[0]} is given twice`);
      out.params[parsed[0]] = parsed[1];
    }
  }
  const refs = (opts.dependsOn ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  if (opts.after !== undefined && !(AFTER_MODES as readonly string[]).includes(opts.after)) throw usageError(`--after ${JSON.stringify(opts.after)}: expected one of ${AFTER_MODES.join(', ')}`);
  if (opts.after !== undefined && !refs.length) throw usageError('--after needs --depends-on');
  if (refs.length) out.dependsOn = { jobs: refs.map((r) => (/^[1-9][0-9]{0,9}$/.test(r) ? Number(r) : r)), ...(opts.after ? { after: opts.after as 'ok' | 'failed' | 'any' } : {}) };
  return out;
}

/**
 * Parses a priority given on the command line (`--priority`, `set-priority`): an integer 0–1000.
 * @throws CliError USAGE naming `what` otherwise.
 */
export function parsePriority(raw: string, what: string): number {
  const n = /^[0-9]{1,4}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (priorityProblem(n)) throw usageError(`${what} ${JSON.stringify(raw)}: ${PRIORITY_EXPECTED}`);
  return n;
}

/**
 * Parses `--queue`: a queue name (lib/jobs/spec queue name rule). Whether the server has it is the
 * server's to say (400 with the list of queues).
 * @throws CliError USAGE otherwise.
 */
export function parseQueue(raw: string): string {
  if (queueNameProblem(raw)) throw usageError(`--queue ${JSON.stringify(raw)}: ${QUEUE_NAME_EXPECTED}`);
  return raw;
}

/**
 * A fresh submissionId for one `launch` (Ray's `submission_id`, e.g. `raysubmit_…`): it makes the
 * submit idempotent by construction, so a submit whose connection dropped can be sent again
 * without creating a second job.
 */
export function newSubmissionId(): string {
  return `jobdeck-cli-${randomUUID()}`;
}

/**
 * Parses `--env` values: `K=V`, or `K` alone to pass this shell's value of K.
 * @throws CliError USAGE for a malformed entry or an unset `K`.
 */
export function parseEnvs(list: readonly string[], env: NodeJS.ProcessEnv, flag: '--env' | '--secret' = '--env'): Record<string, string> | undefined {
  if (!list.length) return undefined;
  const out: Record<string, string> = {};
  for (const item of list) {
    const eq = item.indexOf('=');
    const k = eq < 0 ? item : item.slice(0, eq);
    // A secret's value is never echoed back in an error: only its name.
    const shown = flag === '--secret' ? JSON.stringify(k) : JSON.stringify(item);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw usageError(`${flag} ${shown}: expected NAME=VALUE (or NAME to pass its value from this shell); NAME must match [A-Za-z_][A-Za-z0-9_]*`);
    if (eq < 0) {
      const v = env[k];
      if (v === undefined) throw usageError(`${flag} ${k}: ${k} is not set in this shell; give a value with ${flag} ${k}=VALUE`);
      out[k] = v;
    } else out[k] = item.slice(eq + 1);
  }
  return out;
}

/** A local problem of the library (a file that cannot be read or packed) as bad input (exit 2). */
export async function local<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof BadRequestError) throw usageError(err.message);
    throw err;
  }
}

/**
 * The spec's warnings of a submit (keys accepted, not acted on), one `warning: file:line key: …`
 * line each on stderr — stdout stays the command's product. A server without warnings sends none.
 */
export function printWarnings(ctx: CliContext, warnings: unknown): void {
  for (const line of formatIssues(warnings)) ctx.err(`${ctx.errColors.yellow('warning:')} ${line}`);
}

/** The action of `launch`. Answers the exit code. */
export async function launchAction(ctx: CliContext, file: string | undefined, opts: LaunchOptions): Promise<number> {
  if (file && opts.cmd) throw usageError('give a job file or --cmd, not both');
  if (!file && !opts.cmd) throw usageError('give a job file (jobdeck launch job.yaml) or a command (jobdeck launch --cmd "python train.py")');
  const reconnectTimeoutMs = opts.reconnectTimeout === undefined ? undefined : parseDuration(opts.reconnectTimeout, '--reconnect-timeout');
  const req: SubmitRequest = {};
  let taskFile: string | null = null;
  if (file) {
    taskFile = await local(resolveTaskFile(file, ctx.io.cwd));
    req.yaml = await local(readSpecFile(taskFile, ctx.io.cwd));
    req.filename = taskFile;
  } else req.cmd = opts.cmd;
  if (opts.name) req.name = opts.name;
  const envs = parseEnvs(opts.env, ctx.io.env);
  if (envs) req.envs = envs;
  const secrets = parseEnvs(opts.secret ?? [], ctx.io.env, '--secret');
  if (secrets) req.secrets = secrets;
  if (opts.priority !== undefined) req.priority = parsePriority(opts.priority, '--priority');
  if (opts.queue !== undefined) req.queue = parseQueue(opts.queue);
  Object.assign(req, flowFields(opts));
  // One id per invocation: a retried submit (dropped connection) answers the same job.
  req.submissionId = opts.submissionId ?? newSubmissionId();

  const client = await ctx.client();
  const { yaml, cmd, filename, ...overrides } = req;
  // A task file's relative workdir and local file_mounts go with it (the client library packs
  // and uploads them, docs/spec.md "workdir"): its folder is where they are resolved from.
  const job = yaml !== undefined ? { yaml, filename, ...(taskFile !== null ? { base: path.dirname(path.resolve(ctx.io.cwd, taskFile)) } : {}) } : { cmd: cmd! };
  const res = await client.submitJob(job, {
    ...overrides,
    cwd: ctx.io.cwd,
    onUpload: (u) => ctx.err(`${ctx.errColors.bold('⚙︎')} Uploaded ${u.label} (${u.source}): ${u.manifest.entries} entries, ${u.manifest.size} bytes`),
  });
  printWarnings(ctx, res.warnings);
  if (res.group) {
    // A group is many jobs: its line, not one job's log (jobdeck queue folds it; jobdeck groups show G).
    const ids = res.group.jobIds;
    ctx.out(`Group submitted, ID: ${res.group.id} (${res.group.size} job${res.group.size === 1 ? '' : 's'}: ${ids[0]}${ids.length > 1 ? `–${ids[ids.length - 1]}` : ''})`);
    return EXIT.OK;
  }
  // `created` false with our own generated id only means a retry found the job the first try made.
  const existing = !res.created && opts.submissionId !== undefined;
  const line = `Job submitted, ID: ${res.id}${existing ? ` (the existing job of submission id ${res.submissionId})` : ''}`;
  // stdout carries a command's product: the ID line when detached, the log bytes when following.
  if (opts.detach) {
    ctx.out(line);
    return EXIT.OK;
  }
  ctx.err(`${ctx.errColors.bold('⚙︎')} ${line}`);
  return runFollow(ctx, res.id, { follow: true, raw: opts.raw, reconnectTimeoutMs });
}

/** Options of `rerun` as commander parses them. */
export interface RerunOptions {
  detach?: boolean;
  raw?: boolean;
  reconnectTimeout?: string;
  name?: string;
  env?: string[];
  priority?: string;
}

/** The action of `rerun`: the new job's ID line, then its logs unless detached. */
export async function rerunAction(ctx: CliContext, idArg: string, opts: RerunOptions): Promise<number> {
  const id = parseJobId(idArg);
  const reconnectTimeoutMs = opts.reconnectTimeout === undefined ? undefined : parseDuration(opts.reconnectTimeout, '--reconnect-timeout');
  const changes: { name?: string; envs?: Record<string, string>; priority?: number } = {};
  if (opts.name !== undefined) changes.name = opts.name;
  const envs = parseEnvs(opts.env ?? [], ctx.io.env);
  if (envs) changes.envs = envs;
  if (opts.priority !== undefined) changes.priority = parsePriority(opts.priority, '--priority');
  const client = await ctx.client();
  const res = await client.rerun(id, changes);
  printWarnings(ctx, res.warnings);
  const line = `Job submitted, ID: ${res.id} (a re-run of job ${id})`;
  if (opts.detach) {
    ctx.out(line);
    return EXIT.OK;
  }
  ctx.err(`${ctx.errColors.bold('⚙︎')} ${line}`);
  return runFollow(ctx, res.id, { follow: true, raw: opts.raw, reconnectTimeoutMs });
}

/** Adds `launch` and `rerun` to the program. */
export function addLaunch(program: Command, ctx: () => CliContext, run: (fn: () => Promise<number>) => Promise<void>): void {
  program
    .command('launch')
    .summary('submit a job (a YAML file or one command) and follow its logs')
    .description(
      'Submit a job and follow it task by task until it ends (like `jobdeck logs`), unless --detach. ' +
        'The exit code tells how the job ended: 0 only when it SUCCEEDED. ' +
        'A spec error is shown with file:line and key path (exit 2).\n\n' +
        'With --cmd the job is one command: its task is named like the job (-n, else the command).',
    )
    .argument('[file]', 'job YAML file (one document, or several separated by --- for a pipeline), or a folder holding task.yaml; a relative workdir is packed and uploaded with the job')
    .option('--cmd <command>', 'submit a one-command job instead of a file (its `run` script)')
    .option('-n, --name <name>', 'job name (overrides the name in the file)')
    .option('--env <NAME=VALUE>', 'set an env var for every task (repeatable; NAME alone passes its value from this shell)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--secret <NAME[=VALUE]>', 'set a secret for every task: an env var never shown back (repeatable; NAME alone passes its value from this shell, which keeps it out of your shell history)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--priority <N>', `admission priority ${PRIORITY.min}–${PRIORITY.max}: higher starts first, FIFO within a priority (default: the file's \`priority\`, else the queue's, else ${PRIORITY.default})`)
    .option('--queue <NAME>', "the operator queue (`jobdeck queues`; default: the file's `queue`, else default); one the server does not have is refused with the list")
    .option('-d, --detach', 'do not follow: print "Job submitted, ID: N" on stdout and exit 0')
    .option('--submission-id <id>', 'idempotency key: a repeat with the same spec answers the existing job instead of a new one (default: a new id per launch, so a retried submit never makes two jobs)')
    .option('--raw', 'on a terminal too, write the log bytes exactly (escape sequences and all)')
    .option('--num-jobs <N>', `submit N jobs as one group, each with SKYPILOT_JOB_RANK / JOBDECK_ARRAY_INDEX (per --param combination; at most ${ARRAY_LIMITS.maxJobs} in all); prints the group's line instead of following`)
    .option('--param <NAME=v1,v2,…>', 'a sweep: one job per combination of the values of every --param (repeatable), each value in env var NAME and in the job name', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--depends-on <ID|NAME>', "wait for these jobs (ids, or names: your most recent job or group of that name; repeatable or comma-separated)", (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--after <ok|failed|any>', 'with --depends-on: start once they all succeeded (ok, the default), all ended otherwise (failed), or all ended (any)')
    .option(...RECONNECT_TIMEOUT_OPTION)
    .action(async (file: string | undefined, opts: LaunchOptions) => run(() => launchAction(ctx(), file, opts)));
  program
    .command('rerun')
    .summary('submit a job again as it was submitted (or with a new name, env vars or priority) and follow the new job')
    .description(
      'Submit job ID again as a new job: its YAML as submitted (secrets included), the name and --env ' +
        'values given at launch, its queue and priority, its metadata — with what -n, --env and ' +
        '--priority change. Then follow it like `launch` unless --detach.',
    )
    .argument('<id>', 'the job to run again')
    .option('-n, --name <name>', 'the new job\'s name (default: the job\'s)')
    .option('--env <NAME=VALUE>', 'set an env var for every task, over the ones given at launch (repeatable; NAME alone passes its value from this shell)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--priority <N>', `admission priority ${PRIORITY.min}–${PRIORITY.max} (default: the job's)`)
    .option('-d, --detach', 'do not follow: print "Job submitted, ID: N (a re-run of job ID)" on stdout and exit 0')
    .option('--raw', 'on a terminal too, write the log bytes exactly (escape sequences and all)')
    .option(...RECONNECT_TIMEOUT_OPTION)
    .action(async (id: string, opts: RerunOptions) => run(() => rerunAction(ctx(), id, opts)));
}
