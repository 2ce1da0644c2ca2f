import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * jobdeck's configuration: THE reader of every environment variable jobdeck reads. One table
 * (VARIABLES) says of each its name, what it holds and its bounds, its default and its one-line
 * doc; `setting(name, env)` reads one (the modules that use a variable read it through here);
 * the README's "Configuration" table is generated from it (configMarkdown(); a unit test checks
 * the README carries exactly that, and that no module reads a variable the table lacks).
 *
 * Read from the environment once per call (cheap; no caching, so tests can set variables before
 * starting a server). A malformed value throws ConfigError naming the variable, what it expects
 * and what it got; a server reads its settings at start, so a bad one stops the start.
 *
 * What a few variables hold has a grammar of its own, checked where it is used, with errors
 * naming the variable: JOBDECK_OIDC_* (lib/auth/oidc-config.ts), JOBDECK_ORIGINS and the tokens
 * (lib/auth/state.ts), JOBDECK_EXECUTOR (lib/jobs/spec), JOBDECK_SLURM_GPU_TYPES
 * (lib/executors/slurm/launch.ts), JOBDECK_V8_FLAGS (lib/server/v8-flags.ts) and the
 * JOBDECK_QUOTA_* family (lib/jobs/quotas.ts refuses any other JOBDECK_QUOTA_* name).
 * next.config.mjs and scripts/build-if-stale.mjs, plain JavaScript, read JOBDECK_NEXT_DIST (and
 * next.config.mjs JOBDECK_NEXT_TYPECHECK) themselves, as their rows say.
 */

/** Environment variables by name: process.env, or a plain object (tests). */
export type Env = Readonly<Record<string, string | undefined>>;

/** A malformed setting: the message names the variable, what it expects and what it got. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** One variable the reader owns. */
export interface Variable<T> {
  /** What it holds, as the docs show it: `integer ≥ 10`, `0 or 1`, `path`… */
  readonly value: string;
  /** Its default, as the docs show it (`—`: none). */
  readonly shown: string;
  /** What it does: one line of the README's table (Markdown). */
  readonly doc: string;
  /** Its value from its text (undefined: unset). @throws ConfigError naming `name`. */
  read(raw: string | undefined, name: string): T;
}

const blank = (raw: string | undefined): raw is undefined => raw === undefined || raw.trim() === '';
const fail = (name: string, expected: string, raw: string | undefined) => new ConfigError(`${name}: expected ${expected}, got "${raw}"`);
const shownOf = (def: unknown) => (def === null || def === undefined ? '—' : `\`${String(def)}\``);
const bounds = (min: number, max: number | undefined) => (max === undefined ? `≥ ${min}` : `${min}–${max}`);

interface NumberOptions<D> {
  def: D;
  min: number;
  max?: number;
  doc: string;
  /** What the error says is expected (default: `an integer from 1 to 10` / `an integer ≥ 1`). */
  expect?: string;
  shown?: string;
}

/** Decimal digits (with a fraction when `fraction`) within [min, max]; `def` when unset or empty. */
function numeric<D extends number | null>(kind: 'integer' | 'number', o: NumberOptions<D>): Variable<number | D> {
  const expected = o.expect ?? `${kind === 'integer' ? 'an integer' : 'a number'} ${o.max === undefined ? `≥ ${o.min}` : `from ${o.min} to ${o.max}`}`;
  const digits = kind === 'integer' ? /^[0-9]+$/ : /^[0-9]+(\.[0-9]+)?$/;
  return {
    value: `${kind} ${bounds(o.min, o.max)}`,
    shown: o.shown ?? shownOf(o.def),
    doc: o.doc,
    read(raw, name) {
      if (blank(raw)) return o.def;
      const t = raw.trim();
      const n = digits.test(t) ? Number(t) : NaN;
      if (!Number.isFinite(n) || n > Number.MAX_SAFE_INTEGER || n < o.min || (o.max !== undefined && n > o.max)) throw fail(name, expected, raw);
      return n;
    },
  };
}
const int = <D extends number | null>(o: NumberOptions<D>) => numeric('integer', o);
const num = <D extends number | null>(o: NumberOptions<D>) => numeric('number', o);

/** On or off: `1`/`true` or `0`/`false` (any case); `strict`: only `0` or `1`. */
function flag(def: boolean, doc: string, strict = false): Variable<boolean> {
  const on = strict ? ['1'] : ['1', 'true'];
  const off = strict ? ['0'] : ['0', 'false'];
  return {
    value: '0 or 1',
    shown: def ? '`1`' : '`0`',
    doc,
    read(raw, name) {
      if (blank(raw)) return def;
      const t = strict ? raw.trim() : raw.trim().toLowerCase();
      if (on.includes(t)) return true;
      if (off.includes(t)) return false;
      throw fail(name, '0 or 1', strict ? t : raw);
    },
  };
}

/** Text (trimmed, unless `trim: false`); `def` when unset or empty. */
function text<D extends string | null>(o: { def: D; value: string; doc: string; shown?: string; trim?: boolean }): Variable<string | D> {
  return {
    value: o.value,
    shown: o.shown ?? shownOf(o.def),
    doc: o.doc,
    read: (raw) => (o.trim === false ? raw || o.def : raw?.trim() || o.def),
  };
}

/** The text as it is (`def` when unset): for a variable whose empty value means something. */
function verbatim<D extends string | undefined>(o: { def: D; value: string; shown: string; doc: string }): Variable<string | D> {
  return { value: o.value, shown: o.shown, doc: o.doc, read: (raw) => raw ?? o.def };
}

/** A value with a grammar of its own: `read` parses it (and throws ConfigError naming the variable). */
function custom<T>(o: Variable<T>): Variable<T> {
  return o;
}

/** Default `shared_buffers` of the embedded PGlite (bench/README.md: resident in the server process; 16 MB keeps a bare PGlite at ~180 MB RSS, list pages as fast). */
export const DEFAULT_PGLITE_SHARED_BUFFERS = '16MB';
/**
 * Default of JOBDECK_PGLITE_WORKER: PGlite in the server's thread (`0`), not in a worker thread
 * (`1`). On 2 cores the worker starts many jobs no sooner and costs ~20–30 % more server CPU;
 * it buys a lower exit → stream latency and more submits/s (bench/README.md, "Measured choices").
 */
export const DEFAULT_PGLITE_WORKER = '0' as '0' | '1';
/** Default of JOBDECK_LEFTOVER_GRACE_MS (ms). */
export const DEFAULT_LEFTOVER_GRACE_MS = 2000;
/** Default of JOBDECK_V8_FLAGS (lib/server/v8-flags.ts: why). */
export const DEFAULT_V8_FLAGS = '--heap-growing-percent=50';
/** Default of JOBDECK_UPLOAD_MAX_BYTES: 100 MiB. */
export const DEFAULT_UPLOAD_MAX_BYTES = 100 * 1024 * 1024;
/** Default of JOBDECK_UPLOAD_MAX_UNPACKED_BYTES: 1 GiB (the archive inflated: what each attempt writes). */
export const DEFAULT_UPLOAD_MAX_UNPACKED_BYTES = 1024 * 1024 * 1024;

/** kB in a PostgreSQL size ("16MB" → 16384). */
function sizeKb(size: string): number {
  const n = parseInt(size, 10);
  return size.endsWith('GB') ? n * 1024 * 1024 : size.endsWith('MB') ? n * 1024 : n;
}

const BYTE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1e3, kb: 1e3, m: 1e6, mb: 1e6, g: 1e9, gb: 1e9, t: 1e12, tb: 1e12, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 };
const DURATION_UNITS: Record<string, number> = { '': 1000, ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };
const DESIGN = '[docs/design.md](docs/design.md)';
const SPEC = '[docs/spec.md](docs/spec.md)';

/**
 * The variables jobdeck SETS for a task's processes (lib/executors/wrapper.ts, the Slurm gang):
 * not settings, never read by jobdeck. `JOBDECK_TASK_<NAME>_HOST` is a family: one per task of a
 * job group (docs/spec.md "Job groups").
 */
export const ATTEMPT_VARIABLES = ['JOBDECK_JOB_ID', 'JOBDECK_TASK_INDEX', 'JOBDECK_ATTEMPT', 'JOBDECK_NODE_RANK', 'JOBDECK_NUM_NODES', 'JOBDECK_NODE_IPS', 'JOBDECK_ARRAY_INDEX', 'JOBDECK_ARRAY_COUNT', 'JOBDECK_TASK_NAME', 'JOBDECK_GROUP_TASKS', 'JOBDECK_TASK_<NAME>_HOST'] as const;

/** Every variable jobdeck reads, in the README's order. */
export const VARIABLES = {
  // ─── the server ──────────────────────────────────────────────────────────────────────────
  PORT: int({ def: 3000, min: 0, max: 65535, doc: 'HTTP port' }),
  HOST: text({ def: '127.0.0.1', value: 'address', trim: false, doc: 'address to bind; anything but loopback requires `JOBDECK_TOKEN`' }),
  JOBDECK_HOME: text({ def: null, value: 'path', trim: false, shown: '`~/.jobdeck`', doc: 'data folder: embedded database (`db/`), attempt folders and logs (`jobs/`), token; it belongs to one database (`database.json` names it; a start with another `DATABASE_URL` is refused)' }),
  DATABASE_URL: custom<string | null>({
    value: 'URL',
    shown: '—',
    doc: `\`postgresql://user:pass@host:5432/db\` to use a PostgreSQL server instead of the embedded PGlite. Several jobdeck servers may share one PostgreSQL database (replicas behind a load balancer): each owns a share of the jobs by lease and a survivor adopts a dead server's jobs (${DESIGN} "Replicas"). They must all see the **same \`JOBDECK_HOME\`** (a shared file system, as Slurm needs): logs and exit records are read from it by whichever server a client is on, and a server whose folder is not the database's is refused. Servers on one host share its \`JOBDECK_CPUS\` (their admission takes a per-host lock); the Insights page lists the live servers`,
    read(raw, name) {
      const url = raw?.trim() || null;
      if (url && !/^postgres(ql)?:\/\//.test(url)) throw new ConfigError(`${name}: expected postgresql://…, got "${url.replace(/:[^:@/]*@/, ':***@')}"`);
      return url;
    },
  }),
  JOBDECK_LEASE_MS: int({ def: 10_000, min: 300, max: 600_000, doc: "with several servers on PostgreSQL: how long a server's job leases last without its heartbeat (ms; renewed every third of it). A killed server's jobs are adopted this long after its last renewal" }),
  JOBDECK_PG_POOL: int({ def: 10, min: 1, doc: 'connections each server keeps to PostgreSQL at most' }),
  JOBDECK_MIGRATIONS_DIR: text({ def: null, value: 'path', trim: false, shown: '`prisma/migrations`', doc: 'where the database migrations are (a bundled or packaged install)' }),
  JOBDECK_PGLITE_SHARED_BUFFERS: custom<string>({
    value: 'size `128kB`–`1GB`',
    shown: `\`${DEFAULT_PGLITE_SHARED_BUFFERS}\``,
    doc: "the embedded PGlite's buffer cache; it is resident in the server process, so each MB here is a MB of server memory. A new data folder's database is created by a short-lived child process, so that its initdb (~800 MB) does not stay in the server",
    read(raw, name) {
      const v = raw?.trim() || DEFAULT_PGLITE_SHARED_BUFFERS;
      // PostgreSQL's minimum is 128kB; PGlite's WASM memory ends at 2 GB.
      if (!/^[1-9][0-9]*(kB|MB|GB)$/.test(v) || sizeKb(v) < 128 || sizeKb(v) > 1024 * 1024) throw fail(name, 'a size from 128kB to 1GB with unit kB, MB or GB (e.g. 16MB)', v);
      return v;
    },
  }),
  JOBDECK_WASM_OPTIMIZE: flag(false, "`1` lets V8 compile the server's WebAssembly — Prisma's query compiler, on either database, and the embedded PGlite — with its optimizing tier too: ~80 MB more memory for an idle server on PostgreSQL, ~50–70 MB more on PGlite with jobs running, for about the same speed on jobdeck's queries (Prisma caches its query plans)", true),
  JOBDECK_PGLITE_OPTIMIZE: flag(false, 'the older name of `JOBDECK_WASM_OPTIMIZE`: `1` does the same', true),
  JOBDECK_PGLITE_WORKER: flag(DEFAULT_PGLITE_WORKER === '1', "`1` runs the embedded PGlite in a worker thread, so that its queries do not hold up the server's event loop (WebSocket messages, HTTP): a lower exit → status latency and more submits/s, for ~20–30 % more server CPU under load and no faster start of many jobs on a 2-core machine", true),
  JOBDECK_V8_FLAGS: verbatim({ def: undefined, value: 'flags', shown: `\`${DEFAULT_V8_FLAGS}\``, doc: "V8 flags the server sets on itself at start (space-separated; empty for none). The default keeps the JavaScript heap from growing to ~4× what is alive after a burst of submissions: ~90 MB less server memory with 1,000 running jobs, same speed (lib/server/v8-flags.ts). Flags V8 reads only at its start go on node's command line: `npm start` passes `--max-semi-space-size=4` (~40 MB less; `SERVER_NODE_FLAGS`)" }),
  JOBDECK_DEV: flag(false, '`1` serves the dashboard from Next.js in development mode (`npm run dev`, `jobdeck server --dev`)', true),
  JOBDECK_NEXT_DIST: text({ def: '.next', value: 'path', trim: false, doc: 'the built dashboard the server serves (several builds side by side; next.config.mjs and `npm start` read it too)' }),
  JOBDECK_NEXT_TYPECHECK: flag(true, "`0` makes `next build` skip its own TypeScript pass, for a build whose types are checked right after by `npm run lint` over the whole project, the build's route types included (`npm test` does so); read by next.config.mjs", true),
  JOBDECK_LOG_LEVEL: text({ def: null, value: 'pino level', shown: '`info`', doc: 'server log level (pino)' }),
  JOBDECK_LOG_PRETTY: text({ def: null, value: '`1` or `0`', shown: 'on a TTY', doc: '`1` for readable, coloured log lines; `0` for JSON lines (after the plain "listening" and login lines)' }),
  // ─── access ──────────────────────────────────────────────────────────────────────────────
  JOBDECK_TOKEN: text({ def: null, value: 'token', shown: 'generated', doc: 'the admin token (≥ 16 characters); when unset, one is created in `JOBDECK_HOME/token`. The CLI sends it too' }),
  JOBDECK_METRICS_TOKEN: text({ def: null, value: 'token', doc: 'a read-only token (≥ 16 characters) that `GET /metrics` accepts besides the admin token — give it to Prometheus; it opens no other route' }),
  JOBDECK_ORIGINS: text({ def: null, value: 'URLs', doc: 'extra allowed origins (comma-separated), for a reverse proxy that rewrites `Host`' }),
  JOBDECK_SESSION_TTL_HOURS: num({ def: null, min: 1, max: 8760, shown: '`168`', expect: 'hours between 1 and 8760', doc: 'how long a browser session lasts (hours)' }),
  JOBDECK_OIDC_ISSUER: text({ def: null, value: 'URL', doc: `single sign-on: the OpenID Connect issuer URL (https; http only on loopback). With it, \`JOBDECK_OIDC_CLIENT_ID\` and \`JOBDECK_OIDC_CLIENT_SECRET\` are required; register \`<base>/api/auth/oidc/callback\` as the redirect URI (${DESIGN} §15 "Single sign-on")` }),
  JOBDECK_OIDC_CLIENT_ID: text({ def: null, value: 'text', doc: 'the client jobdeck is at the provider: its id' }),
  JOBDECK_OIDC_CLIENT_SECRET: text({ def: null, value: 'text', doc: 'the client jobdeck is at the provider: its secret' }),
  JOBDECK_OIDC_BASE_URL: text({ def: null, value: 'URL', shown: "the request's origin", doc: "jobdeck's public `scheme://host[:port]`, for the redirect URI (set it behind a proxy)" }),
  JOBDECK_OIDC_ROLE_CLAIM: text({ def: 'groups', value: 'claim name', doc: 'the id-token claim whose groups pick the role' }),
  JOBDECK_OIDC_ROLES: verbatim({ def: '*=viewer', value: '`group=role` items', shown: '`*=viewer`', doc: '`group=role` items, e.g. `admins=admin,devs=member,*=viewer`: the highest listed role wins, `*` for everyone else; without `*`, unlisted users are refused' }),
  JOBDECK_OIDC_LABEL: text({ def: null, value: 'text', shown: "the issuer's host", doc: 'the name on the login page\'s "Sign in with …" button' }),
  JOBDECK_OIDC_OS_USER_CLAIM: text({ def: null, value: 'claim name', doc: "single sign-on: the id-token claim naming the user's OS account (`User.osUser`), set at each login that carries it" }),
  JOBDECK_QUOTA_MEMBER_PENDING_JOBS: int({ def: null, min: 0, max: 1_000_000, expect: 'a whole number of jobs from 0 to 1000000', doc: `the members' default of the per-user pending quota: jobs a member may have PENDING at once; a submit over it is refused 429. A user's own \`maxPendingJobs\` wins (${DESIGN} §15 "Quotas")` }),
  JOBDECK_QUOTA_ADMIN_PENDING_JOBS: int({ def: null, min: 0, max: 1_000_000, expect: 'a whole number of jobs from 0 to 1000000', doc: "the admins' default of the per-user pending quota (as for members)" }),
  JOBDECK_QUOTA_MEMBER_RUNNING_CPUS: num({ def: null, min: 0, max: 1_000_000, expect: 'a number of CPUs from 0 to 1000000', doc: "the members' default of the per-user running-CPU quota (fractions allowed): a job over it waits, its pending reason saying so. A user's own `maxRunningCpus` wins; `GET /api/users` shows each user's quotas and where they come from. Viewers submit nothing: any other `JOBDECK_QUOTA_*` stops the start" }),
  JOBDECK_QUOTA_ADMIN_RUNNING_CPUS: num({ def: null, min: 0, max: 1_000_000, expect: 'a number of CPUs from 0 to 1000000', doc: "the admins' default of the per-user running-CPU quota (as for members)" }),
  JOBDECK_QUOTA_MEMBER_RUNNING_GPUS: num({ def: null, min: 0, max: 1_000_000, expect: 'a number of GPUs from 0 to 1000000', doc: "the members' default of the per-user running-GPU quota: the GPUs a member's running jobs hold at once (a share of one GPU counts as its fraction). A user's own `maxRunningGpus` wins" }),
  JOBDECK_QUOTA_ADMIN_RUNNING_GPUS: num({ def: null, min: 0, max: 1_000_000, expect: 'a number of GPUs from 0 to 1000000', doc: "the admins' default of the per-user running-GPU quota (as for members)" }),
  JOBDECK_QUOTA_MEMBER_MAX_PRIORITY: int({ def: null, min: 0, max: 1000, expect: 'a whole priority from 0 to 1000', doc: `the highest priority a member may give a job, in every queue (a queue's own \`memberMaxPriority\` may be lower); a submit, re-run or change above it is refused. Admins are never capped (${DESIGN} §15 "Quotas")` }),
  // ─── executors and admission ─────────────────────────────────────────────────────────────
  JOBDECK_ISOLATION: custom<'auto' | 'on' | 'off'>({
    value: '`auto`, `on` or `off`',
    shown: '`auto`',
    doc: `as whom jobs run: \`auto\` — as root, each job as its user's OS account (\`on\`); otherwise single-user (the first admin's jobs as jobdeck's own account, other users' refused); \`on\` needs root; \`off\` runs every user's job as jobdeck's own account (${DESIGN} §16)`,
    read(raw, name) {
      const t = raw?.trim().toLowerCase() || 'auto';
      if (t !== 'auto' && t !== 'on' && t !== 'off') throw new ConfigError(`${name}: expected auto, on or off, got "${raw}"`);
      return t;
    },
  }),
  JOBDECK_RUN_ACCOUNT: custom<string>({
    value: 'OS account',
    shown: '`jobdeck-run`',
    doc: 'with isolation on: the OS account of users without one of their own (create it: `useradd --create-home --user-group jobdeck-run`)',
    read(raw, name) {
      const t = raw?.trim() || 'jobdeck-run';
      if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}$/.test(t)) throw new ConfigError(`${name}: expected an OS account name (letters, digits, _ . -), got "${raw}"`);
      return t;
    },
  }),
  JOBDECK_ACCOUNT_MIN_UID: int({ def: 1000, min: 1, doc: "with isolation on: no job runs as an account below this uid (system and service accounts), nor as root or jobdeck's own" }),
  JOBDECK_EXECUTOR: text({ def: null, value: '`local` or `slurm`', shown: '`local`', doc: 'default executor: `local` processes or `slurm` ([docs/slurm.md](docs/slurm.md)); a job can choose with `resources.infra`' }),
  JOBDECK_CPUS: num({ def: null, min: 0, shown: "the machine's", doc: "CPUs the local executor admits jobs against (`0`: the machine's)" }),
  JOBDECK_CAPACITY_CHECK: flag(true, '`0` admits every job at once'),
  JOBDECK_LOCAL_GPUS: text({ def: null, value: '`N`, or `TYPE:N,…`', shown: '`nvidia-smi`', doc: `GPUs the local executor has: a count (\`4\`) or typed groups (\`A100:2,V100:2\`), devices numbered in the order given; unset: what \`nvidia-smi\` lists. A task asking for more \`accelerators\` than there are is refused at submit; admission grants devices, and an attempt sees only its own — ${SPEC} "accelerators", ${DESIGN} §6 "GPUs"` }),
  JOBDECK_CGROUPS: custom<'auto' | 'off'>({
    value: '`auto` or `off`',
    shown: '`auto`',
    doc: `\`auto\`: each local attempt in its own control group holding it to its \`memory\`, \`cpus\`, process cap and GPU devices, where the server can make one (root, or a delegated tree; the start log and \`GET /api/health\` say so when it cannot); \`off\`: never — ${DESIGN} §7 "Limits"`,
    read(raw, name) {
      const t = raw?.trim().toLowerCase() || 'auto';
      if (t !== 'auto' && t !== 'off') throw new ConfigError(`${name}: expected auto or off, got "${raw}"`);
      return t;
    },
  }),
  JOBDECK_CGROUP_PARENT: custom<string>({
    value: 'group path',
    shown: '`jobdeck`',
    doc: "the parent group of the attempts' groups in each cgroup hierarchy (a relative path)",
    read(raw, name) {
      const t = raw?.trim() || 'jobdeck';
      if (!/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/.test(t) || t.split('/').some((p) => p === '.' || p === '..')) throw new ConfigError(`${name}: expected a relative group path of letters, digits, _ . - and /, got "${raw}"`);
      return t;
    },
  }),
  JOBDECK_ATTEMPT_PIDS_MAX: int({ def: 4096, min: 16, max: 4_194_304, doc: "processes and threads one local attempt may have at once (its control group's `pids.max`)" }),
  JOBDECK_SLURM_PARTITION: text({ def: null, value: 'text', shown: "the cluster's default", doc: 'the Slurm partition jobs are submitted to (`sbatch --partition`)' }),
  JOBDECK_SLURM_GPU_TYPES: text({ def: null, value: '`TYPE=GRES` items', doc: 'SkyPilot GPU type → Slurm GRES type (`A100=nvidia_a100,H100=h100_80gb`); unnamed types are lower-cased (`--gres=gpu:a100:2`)' }),
  JOBDECK_CONTAINER_RUNTIME: custom<'off' | 'podman' | 'docker'>({
    value: '`off`, `podman` or `docker`',
    shown: '`off`',
    doc: `the container runtime \`image_id: docker:IMAGE\` runs with on the local executor (rootful; images it has locally, never pulled); checked at start — the server does not start when it does not answer. \`off\`: such a task is refused at submit — ${DESIGN} §7 "Containers"`,
    read(raw, name) {
      const t = raw?.trim().toLowerCase() || 'off';
      if (t !== 'off' && t !== 'podman' && t !== 'docker') throw new ConfigError(`${name}: expected off, podman or docker, got "${raw}"`);
      return t;
    },
  }),
  JOBDECK_CONTAINER_OPTIONS: text({ def: null, value: 'options', shown: '—', doc: `options given to every call of the container runtime, separated by spaces (\`--runtime=runc --cgroup-manager=cgroupfs\` where crun or systemd cannot serve) — ${DESIGN} §7 "Containers"` }),
  JOBDECK_LAUNCHER: flag(true, "attempts are started by a small launcher process, so the server never forks itself (a fork's cost grows with the server's memory); `0` spawns them from the server", true),
  JOBDECK_UPLOAD_MAX_BYTES: int({ def: DEFAULT_UPLOAD_MAX_BYTES, min: 1, expect: 'a positive integer (bytes)', doc: `largest folder upload (compressed bytes) for a relative \`workdir\` or a local \`file_mounts\` source; the CLI and the server both read it — ${SPEC} "workdir"` }),
  JOBDECK_UPLOAD_MAX_UNPACKED_BYTES: int({ def: DEFAULT_UPLOAD_MAX_UNPACKED_BYTES, min: 1, expect: 'a positive integer (bytes)', doc: "largest folder upload unpacked (bytes; what each attempt's copy may hold): a larger one is refused at upload, naming the limit — [SECURITY.md](SECURITY.md) \"Input limits\"" }),
  JOBDECK_FILE_MOUNT_ROOT: text({ def: null, value: 'path', trim: false, doc: `the folder absolute \`file_mounts\` targets must be under; unset: none is allowed (relative and \`~/…\` targets always are) — ${SPEC} "file_mounts"` }),
  // ─── the monitor ─────────────────────────────────────────────────────────────────────────
  JOBDECK_RECONCILE_MS: int({ def: 1000, min: 10, doc: 'how often every running attempt is probed (ms; exits of attempts jobdeck launched are seen at once)' }),
  JOBDECK_USAGE_INTERVAL_MS: custom<number>({
    value: '`0` or integer 100–3600000',
    shown: '`5000`',
    doc: `how often the CPU time, memory and process count of every running attempt are sampled (ms; one pass over \`/proc\` for all of them; \`0\` turns sampling off); past 1,000 running attempts the rounds space out in proportion (5,000: every fifth interval) — ${DESIGN} §7 "Resource usage"`,
    read(raw, name) {
      const n = int({ def: 5000, min: 0, doc: '' }).read(raw, name);
      if (n !== 0 && (n < 100 || n > 3_600_000)) throw fail(name, '0 (off) or 100–3600000', raw);
      return n;
    },
  }),
  JOBDECK_CANCEL_GRACE_MS: int({ def: 10_000, min: 0, doc: 'SIGTERM → SIGKILL grace on cancel (ms)' }),
  JOBDECK_LEFTOVER_GRACE_MS: int({ def: DEFAULT_LEFTOVER_GRACE_MS, min: 0, doc: 'SIGTERM → SIGKILL grace (ms) for processes an attempt left running when it ended (`sleep 300 &`) — stopped before anything else of the job starts — and for what a deleted job left' }),
  JOBDECK_LAUNCH_GRACE_MS: int({ def: 10_000, min: 0, doc: 'a STARTING attempt with no executor handle yet counts as being launched (by another server on the same database; `sbatch` can take seconds) until this old (ms); then it is lost and recovered' }),
  JOBDECK_START_TIMEOUT_MS: custom<number | null>({
    value: 'integer ≥ 0, or `off`',
    shown: '`off`',
    doc: "a job that cannot start within this (ms) ends `FAILED_NO_RESOURCE`; unset, empty or `off`: a job waits as long as it must (a job with `depends_on`: counted from when its dependencies were met). A queue may set its own (`startTimeoutMs`)",
    read(raw, name) {
      const t = raw?.trim().toLowerCase();
      if (!t || t === 'off') return null;
      if (!/^[0-9]+$/.test(t) || !Number.isSafeInteger(Number(t))) throw new ConfigError(`${name}: expected an integer ≥ 0 (ms) or off, got "${raw}"`);
      return Number(t);
    },
  }),
  JOBDECK_SCHEDULE_TICK_MS: int({ def: 1000, min: 50, max: 60_000, doc: 'how often each server looks for due schedules (ms)' }),
  JOBDECK_SCHEDULE_GRACE_MS: int({ def: 60_000, min: 0, max: 86_400_000, doc: `a schedule's fire time at most this old (ms) is on time; an older one (the server was down) follows the schedule's catch-up rule — ${DESIGN} §19 "Schedules"` }),
  JOBDECK_SCHEDULE_SECONDS: flag(false, '`1` allows a leading seconds field in cron expressions (6 fields) — for tests; a schedule firing every second is rarely what an operator wants', true),
  JOBDECK_MAX_RECOVERIES: int({ def: 3, min: 0, doc: 'recoveries per task before the job ends `FAILED_CONTROLLER`' }),
  JOBDECK_RECOVERY_BACKOFF_MS: int({ def: 1000, min: 0, doc: "delay before a task's first recovery (ms); doubles each time, at most 60 s" }),
  JOBDECK_RESTART_BACKOFF_MS: int({ def: 10_000, min: 0, doc: "the wait before a task's restart after its own failure when its spec gives no `job_recovery.restart_backoff` (ms); doubles for each later attempt of the task, at most `JOBDECK_MAX_RESTART_BACKOFF_MS` — Kubernetes' CrashLoopBackOff numbers: a task failing at once does not spin" }),
  JOBDECK_MAX_RESTART_BACKOFF_MS: int({ def: 300_000, min: 0, doc: "the most a restart's wait grows to (ms); a spec's own larger `restart_backoff` is kept" }),
  JOBDECK_LOST_CONFIRM_MS: int({ def: null, min: 0, shown: '`500` (at most `JOBDECK_RECONCILE_MS`)', doc: 'a "lost" verdict is believed only when a second probe at least this much later (ms) says "lost" again' }),
  JOBDECK_EXIT_WATCH: flag(true, "`0` turns off the executors' immediate exit notification: only the reconcile pass sees exits (interval polling, as Ray's job monitor; a benchmark baseline)"),
  JOBDECK_MONITOR_MAX_ERRORS: int({ def: 3, min: 1, doc: "consecutive unexpected errors of one job's step before the exception path ends the job `FAILED_CONTROLLER` (temporary database failures never count)" }),
  // ─── retention and compression ───────────────────────────────────────────────────────────
  JOBDECK_RETAIN_LOGS_DAYS: int({ def: null, min: 1, max: 36_500, doc: `retention: finished jobs' logs are removed this many days after the job ended; unset: kept. A job's own \`retention: {logs: …}\` wins (${SPEC} "retention") — ${DESIGN} §13 "Retention"` }),
  JOBDECK_RETAIN_LOGS_BYTES: custom<number | null>({
    value: 'size ≥ 1MB',
    shown: '—',
    doc: "retention: while all logs under `$JOBDECK_HOME/jobs` take more than this (bytes, or `500MB`, `20GiB`, `1TB`), the oldest finished jobs' logs are removed (not those with `retention: {logs: forever}`)",
    read(raw, name) {
      if (blank(raw)) return null;
      const m = /^([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)$/i.exec(raw.trim());
      const unit = m ? BYTE_UNITS[m[2].toLowerCase()] : undefined;
      const n = m && unit ? Math.floor(Number(m[1]) * unit) : NaN;
      if (!Number.isFinite(n) || n < 1e6 || n > 1e18) throw fail(name, 'a size of at least 1MB (bytes, or with a unit: 500MB, 20GiB, 1TB)', raw);
      return n;
    },
  }),
  JOBDECK_RETAIN_JOBS_DAYS: int({ def: null, min: 1, max: 36_500, doc: "retention: finished jobs (tasks, attempts, history, folder) are deleted this many days after they ended, each batch recorded in the audit log (`retention.jobs`: ids, bytes); unset: kept. A job's own `retention: {job: …}` wins" }),
  JOBDECK_RETENTION_INTERVAL_MS: int({ def: 600_000, min: 100, max: 86_400_000, doc: 'how often a retention pass runs (ms)' }),
  JOBDECK_RETENTION_BATCH: int({ def: 100, min: 1, max: 10_000, doc: 'how many jobs one statement of a retention pass handles' }),
  JOBDECK_COMPRESS_LOGS_AFTER: custom<number | null>({
    value: 'duration ≤ `365d`, or `off`',
    shown: '`1h`',
    doc: `a finished attempt's logs are stored compressed (gzip; the ratio on log text: [bench/README.md](bench/README.md) \`compress\`) this long after it ended: \`0\`, seconds, or \`90s\`, \`30m\`, \`1h\`, \`2d\`; \`off\`: never. Every read (range, download, the job stream, search) gives the same bytes; the download sends a compressed log as it is with \`Content-Encoding: gzip\` to a client that accepts gzip — ${DESIGN} §8 "Compressed logs"`,
    read(raw, name) {
      const t = raw?.trim().toLowerCase();
      if (!t) return 3_600_000;
      if (t === 'off') return null;
      const m = /^([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|min|h|d)?$/.exec(t);
      const ms = m ? Math.round(Number(m[1]) * DURATION_UNITS[m[2] ?? '']) : NaN;
      if (!Number.isFinite(ms) || ms > 365 * 86_400_000) throw fail(name, '"off" or a duration from 0 to 365d (seconds, or with a unit: 90s, 30m, 1h, 2d)', raw);
      return ms;
    },
  }),
  JOBDECK_COMPRESS_INTERVAL_MS: int({ def: 60_000, min: 100, max: 86_400_000, doc: 'how often the compressor looks for finished logs to compress (ms)' }),
  // ─── webhooks ────────────────────────────────────────────────────────────────────────────
  JOBDECK_WEBHOOKS: flag(true, '`0`: this server sends no webhooks (another one sharing the database does)'),
  JOBDECK_PUBLIC_URL: custom<string | null>({
    value: 'URL',
    shown: '—',
    doc: "the dashboard's address as users reach it (`https://jobs.example.com`): the job link in Slack-format webhooks",
    read(raw, name) {
      const pub = raw?.trim() ?? '';
      if (pub && !/^https?:\/\/[^\s]+$/.test(pub)) throw fail(name, 'an http(s) URL', pub);
      return pub ? pub.replace(/\/+$/, '') : null;
    },
  }),
  JOBDECK_WEBHOOK_ALLOW_PRIVATE: flag(false, '`1` lets webhooks reach loopback, private, link-local and other non-public addresses (refused otherwise: SSRF)'),
  JOBDECK_WEBHOOK_TIMEOUT_MS: int({ def: 10_000, min: 100, max: 600_000, doc: "one webhook request's limit, connect to answer's head (ms)" }),
  JOBDECK_WEBHOOK_CONCURRENCY: int({ def: 16, min: 1, max: 256, doc: 'webhook requests in flight at once per server' }),
  JOBDECK_WEBHOOK_LEASE_MS: int({ def: null, min: 1, max: 86_400_000, shown: '`60000` (3 × the timeout when longer)', doc: 'a delivery claimed by a server that died is sent again after this (ms); at least twice `JOBDECK_WEBHOOK_TIMEOUT_MS`, so a live claim never expires mid-send' }),
  JOBDECK_WEBHOOK_RETRY_BASE_MS: int({ def: 5_000, min: 1, max: 86_400_000, doc: `a failed delivery's retry backoff (ms): try n waits a random time up to min(\`_RETRY_MAX_MS\`, this × 2ⁿ⁻¹) (full jitter; ${DESIGN} §10)` }),
  JOBDECK_WEBHOOK_RETRY_MAX_MS: int({ def: 3_600_000, min: 1, max: 86_400_000, doc: 'the longest retry backoff of a failed delivery (ms)' }),
  JOBDECK_WEBHOOK_RETRY_WINDOW_MS: int({ def: 86_400_000, min: 1, max: 30 * 86_400_000, doc: 'how long a failed delivery is retried (ms) before it is `failed` and its subscription disabled' }),
  // ─── WebSocket streams (lib/ws/config.ts) ────────────────────────────────────────────────
  JOBDECK_WS_HIGH_WATER: int({ def: 1024 * 1024, min: 1, doc: 'a job stream stops reading a log while its socket holds more than this unsent (bytes), and resumes as it drains' }),
  JOBDECK_WS_TOTAL_HIGH_WATER: int({ def: 16 * 1024 * 1024, min: 1, doc: 'the unsent log bytes all job streams sending at once share: each stops at this ÷ their number when lower than `JOBDECK_WS_HIGH_WATER` (never below one frame)' }),
  JOBDECK_WS_HARD_CAP: int({ def: 16 * 1024 * 1024, min: 1, doc: 'a socket holding more unsent than this (bytes) is cut at once' }),
  JOBDECK_WS_STALL_MS: int({ def: 30_000, min: 1, doc: 'a socket above the high-water mark that makes no progress this long (ms) is cut (error `slow_consumer` with where to resume, close 4408)' }),
  JOBDECK_WS_CLOSE_GRACE_MS: int({ def: 10_000, min: 1, doc: 'how long a closing socket may take to flush and answer the close (ms) before it is destroyed' }),
  JOBDECK_WS_LOG_POLL_MS: int({ def: 250, min: 1, doc: 'how often a stream looks at a log when fs.watch says nothing (ms)' }),
  JOBDECK_WS_EVENT_POLL_MS: int({ def: 2_000, min: 1, doc: 'how often a stream reads status changes when the store bus says nothing (ms; a safety net)' }),
  JOBDECK_WS_HEARTBEAT_MS: int({ def: 30_000, min: 10, doc: 'ping interval of the sockets (ms); a peer that missed a pong is dropped' }),
  // ─── the CLI (docs/cli.md) ───────────────────────────────────────────────────────────────
  JOBDECK_URL: text({ def: null, value: 'URL', shown: '`http://$HOST:$PORT`', doc: "the server the CLI talks to (`--url` wins). Set on the server, the URL attempts are given as `JOBDECK_URL` to call jobdeck back with their own `JOBDECK_TOKEN` (set it when jobs run elsewhere: Slurm nodes; default the listen address)" }),
  JOBDECK_RECONNECT_TIMEOUT_MS: num({ def: null, min: 1, shown: '`300000` (a follow) / `60000` (a request)', doc: "how long the CLI keeps retrying a lost server (ms): a follow (then exit 5; `--reconnect-timeout` wins) and a retried request (then exit 6)" }),
  JOBDECK_DEBUG: text({ def: null, value: 'any', doc: 'any value: the CLI prints the stack of an unexpected error' }),
} as const satisfies Record<string, Variable<unknown>>;

/** The name of a variable the reader owns. */
export type VariableName = keyof typeof VARIABLES;
/** The value type of a variable. */
export type SettingOf<N extends VariableName> = ReturnType<(typeof VARIABLES)[N]['read']>;

/**
 * The value of variable `name` in `env` (default: the process environment), read now.
 * @throws ConfigError naming the variable when its value is malformed.
 */
export function setting<N extends VariableName>(name: N, env: Env = process.env): SettingOf<N> {
  return (VARIABLES[name] as Variable<SettingOf<N>>).read(env[name], name);
}

/**
 * The README's "Configuration" table: one row per variable (README.md carries exactly this
 * between its `config:begin` / `config:end` markers; print it with
 * `npx tsx -e "console.log(require('./lib/config').configMarkdown())"`).
 */
export function configMarkdown(): string {
  const rows = Object.entries(VARIABLES).map(([name, v]: [string, Variable<unknown>]) => `| \`${name}\` | ${v.value} | ${v.shown} | ${v.doc} |`);
  return ['| variable | value | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** The server's basic configuration (the other settings are read by the modules that use them). */
export interface Config {
  port: number;
  host: string;
  home: string;
  databaseUrl: string | undefined;
  /** PostgreSQL size with unit (`16MB`, `512kB`, `1GB`) for the embedded PGlite's shared_buffers. */
  pgliteSharedBuffers: string;
  /** Let V8 compile the server's WebAssembly (Prisma's query compiler, PGlite) with its optimizing tier (more memory; `JOBDECK_WASM_OPTIMIZE=1`, or its older name `JOBDECK_PGLITE_OPTIMIZE=1`). */
  wasmOptimize: boolean;
  /** Run the embedded PGlite in a worker thread (`JOBDECK_PGLITE_WORKER=1`) instead of the server's thread (default). */
  pgliteWorker: boolean;
}

/** The data folder: JOBDECK_HOME, else `~/.jobdeck`, absolute. */
export function homeFolder(env: Env = process.env): string {
  // A runtime data folder, not a project file: keep the bundler from tracing it.
  return path.resolve(/*turbopackIgnore: true*/ setting('JOBDECK_HOME', env) ?? path.join(os.homedir(), '.jobdeck'));
}

/** Reads the configuration. @throws ConfigError naming the variable when a value is malformed. */
export function loadConfig(env: Env = process.env): Config {
  return {
    port: setting('PORT', env),
    host: setting('HOST', env),
    home: homeFolder(env),
    databaseUrl: setting('DATABASE_URL', env) ?? undefined,
    pgliteSharedBuffers: setting('JOBDECK_PGLITE_SHARED_BUFFERS', env),
    wasmOptimize: setting('JOBDECK_WASM_OPTIMIZE', env) || setting('JOBDECK_PGLITE_OPTIMIZE', env),
    pgliteWorker: setting('JOBDECK_PGLITE_WORKER', env),
  };
}

/**
 * `JOBDECK_LEFTOVER_GRACE_MS` (ms, integer ≥ 0, default 2000): the SIGTERM → SIGKILL grace for
 * processes an attempt left behind when it ended (`sleep 300 &`) — stopped by the monitor's
 * reap (lib/monitor/config.ts) — and for what a deleted job left (lib/control/delete.ts).
 * @throws ConfigError naming the variable when the value is not such an integer.
 */
export function leftoverGraceMsFromEnv(env: Env = process.env): number {
  return setting('JOBDECK_LEFTOVER_GRACE_MS', env);
}

/**
 * File name of the plain admin token inside the data folder: written by the server
 * (lib/auth/tokens.ts), read by the CLI (readLocalToken).
 */
export const TOKEN_FILE = 'token';

/** Path of the plain token file for a data folder (default: the configured JOBDECK_HOME). */
export function tokenPath(home?: string): string {
  return path.join(/*turbopackIgnore: true*/ home ?? homeFolder(), TOKEN_FILE);
}

/**
 * The token a local server generated, for the CLI: the trimmed contents of
 * `$JOBDECK_HOME/token` (default `~/.jobdeck/token`), or null when the file does not exist, is
 * empty or cannot be read. Never throws. The CLI should prefer `--token` and `JOBDECK_TOKEN`, and
 * fall back to this (only useful against a server on this machine using the same data folder).
 *
 * @param home the server's data folder; default JOBDECK_HOME or ~/.jobdeck.
 */
export function readLocalToken(home?: string): string | null {
  try {
    const t = readFileSync(tokenPath(home), 'utf8').trim();
    return t.length > 0 ? t : null;
  } catch {
    return null;
  }
}


/**
 * Whether jobs run as their users' OS accounts (docs/design.md §16 "Isolation"), read from
 * `JOBDECK_ISOLATION` (`auto` | `on` | `off`, default `auto`):
 *
 * - `on` — each attempt runs as its user's account (User.osUser, else JOBDECK_RUN_ACCOUNT). Needs
 *   jobdeck to run as root: only root can start a process as another account.
 * - `auto` — `on` when jobdeck runs as root; otherwise **single-user**: jobdeck runs as someone's
 *   own account (the README's `npm start`), every job of the first admin runs as that account as
 *   before, and a job of any other user is refused (FAILED_PRECHECKS, saying why): it would run
 *   as jobdeck's own account, with jobdeck's data.
 * - `off` — every job of every user runs as jobdeck's own account, unisolated: the operator's
 *   explicit choice (the start log warns when jobdeck is root).
 */
export interface Isolation {
  /** Attempts start as other OS accounts. */
  on: boolean;
  /** What JOBDECK_ISOLATION said. */
  setting: 'auto' | 'on' | 'off';
  /** Off because jobdeck serves its own OS user alone (auto, not root): other users' jobs are refused. */
  singleUser: boolean;
  /** JOBDECK_RUN_ACCOUNT: the account of users with none of their own (isolation on). */
  runAccount: string;
  /** JOBDECK_ACCOUNT_MIN_UID. */
  minUid: number;
  /** The uid jobdeck runs as. */
  serverUid: number;
  /** One sentence: the mode and why (the start log, /api/health). */
  why: string;
}

/**
 * Reads the isolation settings (see Isolation). `euid`: the uid jobdeck runs as.
 * @throws Error naming the variable for a malformed value, or `JOBDECK_ISOLATION=on` when not root.
 */
export function isolationFromEnv(env: Readonly<Record<string, string | undefined>> = process.env, euid: number = process.geteuid?.() ?? -1): Isolation {
  const raw = setting('JOBDECK_ISOLATION', env);
  const runAccount = setting('JOBDECK_RUN_ACCOUNT', env);
  const minUid = setting('JOBDECK_ACCOUNT_MIN_UID', env);
  const root = euid === 0;
  if (raw === 'on' && !root) throw new Error(`JOBDECK_ISOLATION=on: jobdeck runs as uid ${euid}, and only root can start a job as another OS account (run jobdeck as root, or leave JOBDECK_ISOLATION unset for a single-user jobdeck)`);
  const on = raw === 'on' || (raw === 'auto' && root);
  const singleUser = raw === 'auto' && !root;
  const why = on
    ? `isolation on: each job runs as its user's OS account (users without one as ${runAccount})${raw === 'auto' ? ', because jobdeck runs as root' : ''}`
    : singleUser
      ? `single-user: jobdeck runs as uid ${euid}, not root, so it runs only the first admin's jobs, as its own account; other users' jobs are refused`
      : `isolation off (JOBDECK_ISOLATION=off): every user's job runs as jobdeck's own account (uid ${euid})${root ? ' — root' : ''}, with jobdeck's data in reach`;
  return { on, setting: raw, singleUser, runAccount, minUid, serverUid: euid, why };
}

/**
 * The address attempts are given as `JOBDECK_URL` to call jobdeck back (docs/spec.md "What each
 * attempt gets"): `JOBDECK_URL` when set on the server (a URL the attempts' hosts can reach —
 * Slurm nodes, a proxy), else `http://<listen address>:<port>` (a wildcard address as loopback).
 * @throws Error naming the variable when JOBDECK_URL is not an http(s) URL.
 */
export function jobApiUrl(host: string, port: number, env: Readonly<Record<string, string | undefined>> = process.env): string {
  const raw = setting('JOBDECK_URL', env);
  if (raw) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new Error(`JOBDECK_URL: expected an http(s) URL the attempts can reach, got "${raw}"`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`JOBDECK_URL: expected an http(s) URL the attempts can reach, got "${raw}"`);
    return raw.replace(/\/+$/, '');
  }
  const h = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' || host === '[::]' ? '[::1]' : host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${h}:${port}`;
}
