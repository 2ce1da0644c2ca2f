/**
 * `jobdeck launch FILE.yaml | --cmd "…"`: submits a job (POST /api/jobs), prints
 * `Job submitted, ID: N`, then follows it like `jobdeck logs N` unless `--detach`.
 * `jobdeck rerun ID`: submits job ID again as it was submitted (POST /api/jobs/:id/rerun), then
 * the same.
 */
import { randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { parseAllDocuments } from 'yaml';
import { formatIssues, type JobdeckClient, type SubmitRequest } from '../client';
import { packFile, packFolder, uploadCap } from '../pack';
import type { CliContext } from '../context';
import { usageError } from '../errors';
import { EXIT } from '../exit-codes';
import { RECONNECT_TIMEOUT_OPTION, runFollow } from './follow-job';
import { parseDuration, parseJobId } from './resolve';
import { isRelativeWorkdir, PRIORITY, PRIORITY_EXPECTED, priorityProblem, QUEUE_NAME_EXPECTED, queueNameProblem } from '../../jobs/spec';

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

/** Most bytes of YAML the CLI reads (the server caps request bodies too). */
const MAX_SPEC_BYTES = 1024 * 1024;

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

/** Reads the spec file, with clear errors for a missing, unreadable or oversized file. */
export async function readSpecFile(file: string, cwd: string): Promise<string> {
  const abs = path.resolve(cwd, file);
  try {
    const st = await stat(abs);
    if (st.isDirectory()) throw usageError(`${file} is a directory; give a job YAML file`);
    if (st.size > MAX_SPEC_BYTES) throw usageError(`${file} is ${st.size} bytes; a job spec may be at most ${MAX_SPEC_BYTES} bytes`);
    return await readFile(abs, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw usageError(`file not found: ${file} (looked for ${abs})`);
    if (code === 'EACCES') throw usageError(`cannot read ${file}: permission denied`);
    throw err;
  }
}

/** The task file `jobdeck launch` reads in a folder given instead of a file (SkyPilot's name). */
export const FOLDER_TASK_FILE = 'task.yaml';

/**
 * `jobdeck launch DIR`: the folder's task.yaml; a file is itself.
 * @throws CliError USAGE when a folder holds no task.yaml.
 */
export async function resolveTaskFile(file: string, cwd: string): Promise<string> {
  const st = await stat(path.resolve(cwd, file)).catch(() => null);
  if (!st?.isDirectory()) return file;
  const inside = path.join(file, FOLDER_TASK_FILE);
  if (!(await stat(path.resolve(cwd, inside)).catch(() => null))?.isFile()) throw usageError(`${file} is a folder without a ${FOLDER_TASK_FILE}; give the task file itself (jobdeck launch ${path.join(file, 'FILE.yaml')})`);
  return inside;
}

/**
 * The one folder the tasks' relative workdirs name, resolved from the task file's folder, or null
 * when no task has one. A pipeline whose tasks name different folders is refused (one upload per job).
 * @throws CliError USAGE for two different folders.
 */
export function relativeWorkdirFolder(yamlText: string, base: string): { dir: string; written: string } | null {
  let found: { dir: string; written: string } | null = null;
  for (const doc of parseAllDocuments(yamlText)) {
    const v: unknown = doc.errors.length ? null : doc.toJS();
    const w = v && typeof v === 'object' && !Array.isArray(v) ? (v as { workdir?: unknown }).workdir : undefined;
    if (typeof w !== 'string' || w.trim() === '' || !isRelativeWorkdir(w)) continue;
    const dir = path.resolve(base, w);
    if (found && found.dir !== dir) throw usageError(`the tasks name different relative workdirs (${found.written}, ${w}); one job uploads one folder — give them the same workdir`);
    found ??= { dir, written: w };
  }
  return found;
}

/** Packs and uploads the folder of a relative workdir (docs/spec.md "workdir"); its hash, or null when there is none. */
async function uploadWorkdir(ctx: CliContext, client: JobdeckClient, yamlText: string, base: string): Promise<string | null> {
  const wd = relativeWorkdirFolder(yamlText, base);
  if (!wd) return null;
  const label = `workdir ${wd.written}`;
  const packed = await packFolder(wd.dir, uploadCap(ctx.io.env), label);
  const m = await client.upload(packed.bytes, label);
  ctx.err(`${ctx.errColors.bold('⚙︎')} Uploaded ${label} (${wd.dir}): ${m.entries} entries, ${m.size} bytes`);
  return m.hash;
}

/**
 * The local sources of the tasks' `file_mounts`: target → absolute source path (relative sources
 * from the task file's folder, `~/` from this user's home). Buckets and storage objects are left
 * to the server, which refuses them with the reason.
 * @throws CliError USAGE when two tasks mount different sources at one target.
 */
export function localFileMounts(yamlText: string, base: string, homeDir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const doc of parseAllDocuments(yamlText)) {
    const v: unknown = doc.errors.length ? null : doc.toJS();
    const fm = v && typeof v === 'object' && !Array.isArray(v) ? (v as { file_mounts?: unknown }).file_mounts : undefined;
    if (!fm || typeof fm !== 'object' || Array.isArray(fm)) continue;
    for (const [target, source] of Object.entries(fm as Record<string, unknown>)) {
      if (typeof source !== 'string' || source.trim() === '' || /^[a-z][a-z0-9+.-]*:\/\//i.test(source)) continue;
      const abs = source === '~' || source.startsWith('~/') ? path.join(homeDir, source.slice(1)) : path.resolve(base, source);
      const known = out.get(target);
      if (known !== undefined && known !== abs) throw usageError(`file_mounts ${target}: the tasks mount different sources there (${known}, ${abs}); one job uploads one source per target`);
      out.set(target, abs);
    }
  }
  return out;
}

/** Packs and uploads each local `file_mounts` source (docs/spec.md "file_mounts"); null when there is none. */
async function uploadFileMounts(ctx: CliContext, client: JobdeckClient, yamlText: string, base: string): Promise<Record<string, { hash: string; kind: 'file' | 'dir' }> | null> {
  const mounts = localFileMounts(yamlText, base, ctx.io.env.HOME || os.homedir());
  if (mounts.size === 0) return null;
  const out: Record<string, { hash: string; kind: 'file' | 'dir' }> = {};
  const cap = uploadCap(ctx.io.env);
  for (const [target, source] of mounts) {
    const label = `file_mounts ${target}`;
    const st = await stat(source).catch(() => null);
    if (!st) throw usageError(`${label}: the source ${source} does not exist`);
    const kind = st.isDirectory() ? 'dir' : 'file';
    const packed = kind === 'dir' ? await packFolder(source, cap, label) : await packFile(source, cap, label);
    const m = await client.upload(packed.bytes, label);
    ctx.err(`${ctx.errColors.bold('⚙︎')} Uploaded ${label} (${source}): ${m.entries} entries, ${m.size} bytes`);
    out[target] = { hash: m.hash, kind };
  }
  return out;
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
    taskFile = await resolveTaskFile(file, ctx.io.cwd);
    req.yaml = await readSpecFile(taskFile, ctx.io.cwd);
    req.filename = taskFile;
  } else req.cmd = opts.cmd;
  if (opts.name) req.name = opts.name;
  const envs = parseEnvs(opts.env, ctx.io.env);
  if (envs) req.envs = envs;
  const secrets = parseEnvs(opts.secret ?? [], ctx.io.env, '--secret');
  if (secrets) req.secrets = secrets;
  if (opts.priority !== undefined) req.priority = parsePriority(opts.priority, '--priority');
  if (opts.queue !== undefined) req.queue = parseQueue(opts.queue);
  // One id per invocation: a retried submit (dropped connection) answers the same job.
  req.submissionId = opts.submissionId ?? newSubmissionId();

  const client = await ctx.client();
  if (taskFile !== null && req.yaml !== undefined) {
    const base = path.dirname(path.resolve(ctx.io.cwd, taskFile));
    const upload = await uploadWorkdir(ctx, client, req.yaml, base);
    if (upload) req.workdirUpload = upload;
    const mounts = await uploadFileMounts(ctx, client, req.yaml, base);
    if (mounts) req.fileMountUploads = mounts;
  }
  const res = await client.submit(req);
  printWarnings(ctx, res.warnings);
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
}

/** The action of `rerun`: the new job's ID line, then its logs unless detached. */
export async function rerunAction(ctx: CliContext, idArg: string, opts: RerunOptions): Promise<number> {
  const id = parseJobId(idArg);
  const reconnectTimeoutMs = opts.reconnectTimeout === undefined ? undefined : parseDuration(opts.reconnectTimeout, '--reconnect-timeout');
  const client = await ctx.client();
  const res = await client.rerun(id);
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
      'Submit a job and follow it task by task until it ends (like `jobdeck logs`), unless --detach.\n' +
        'The exit code tells how the job ended (0 only when it SUCCEEDED; see `jobdeck --help`).\n' +
        'A spec error is shown with file:line and key path (exit 2).',
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
    .option(...RECONNECT_TIMEOUT_OPTION)
    .action(async (file: string | undefined, opts: LaunchOptions) => run(() => launchAction(ctx(), file, opts)));
  program
    .command('rerun')
    .summary('submit a job again, exactly as it was submitted, and follow the new job')
    .description(
      'Submit job ID again as a new job: its YAML as submitted (secrets included), the name and --env\n' +
        'values given at launch, its metadata. Then follow it like `launch` unless --detach.',
    )
    .argument('<id>', 'the job to run again')
    .option('-d, --detach', 'do not follow: print "Job submitted, ID: N (a re-run of job ID)" on stdout and exit 0')
    .option('--raw', 'on a terminal too, write the log bytes exactly (escape sequences and all)')
    .option(...RECONNECT_TIMEOUT_OPTION)
    .action(async (id: string, opts: RerunOptions) => run(() => rerunAction(ctx(), id, opts)));
}
