/**
 * `jobdeck tokens create|list|revoke`, `jobdeck users list|create|set-role|disable|enable` and
 * `jobdeck audit`: personal API tokens, users and roles, and the audit log (the /api/tokens,
 * /api/users and /api/audit routes; docs/design.md §15). `tokens create` prints the token — the
 * only time it is shown.
 */
import Table from 'cli-table3';
import type { Command } from 'commander';
import type { AuditRow, QuotaView, TokenView, UserView } from '../../api/types';
import { usageError } from '../errors';
import type { CliContext } from '../context';
import { EXIT } from '../exit-codes';
import { PLAIN_CHARS } from './manage';

type Run = (fn: () => Promise<number>) => Promise<void>;
const ROLES = ['admin', 'member', 'viewer'];
const ACTIONS = ['job.submit', 'job.cancel', 'job.delete', 'job.rerun', 'job.priority', 'token.create', 'token.revoke', 'user.create', 'user.update', 'login', 'login.failed'];

function table(head: string[], rows: string[][]): string {
  const t = new Table({ head, chars: PLAIN_CHARS, style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true } });
  for (const r of rows) t.push(r);
  return t.toString().split('\n').map((l) => l.replace(/\s+$/, '')).join('\n');
}

const dash = (v: unknown) => (v === null || v === undefined || v === '' ? '-' : String(v));

/** The `jobdeck tokens list` table. */
export function renderTokens(ts: readonly TokenView[]): string {
  return table(
    ['ID', 'USER', 'NAME', 'PREFIX', 'CREATED', 'LAST USED', 'EXPIRES', 'REVOKED'],
    ts.map((t) => [String(t.id), dash(t.userName ?? t.userId), t.name, t.prefix, t.createdAt, dash(t.lastUsedAt), dash(t.expiresAt), dash(t.revokedAt)]),
  );
}

/** A quota cell: the quota that applies, `(role)` when it is the role's default; `-` for none. */
function quotaCell(q: QuotaView | undefined, own: number | null): string {
  if (!q) return dash(own);
  return q.value === null ? '-' : `${q.value}${q.source === 'role' ? ' (role)' : ''}`;
}

/** The `jobdeck users list` table (CPUS and PENDING: the quotas that apply). */
export function renderUsers(us: readonly UserView[]): string {
  return table(
    ['ID', 'NAME', 'ROLE', 'LOGIN', 'CPUS', 'PENDING', 'DISABLED'],
    us.map((u) => [
      String(u.id),
      u.name,
      u.role,
      [u.hasPassword ? 'password' : '', u.sso ? 'sso' : ''].filter(Boolean).join('+') || 'token',
      // An older server answers no `quotas`: the user's own values are all it has.
      quotaCell(u.quotas?.maxRunningCpus, u.maxRunningCpus),
      quotaCell(u.quotas?.maxPendingJobs, u.maxPendingJobs),
      u.disabled ? 'yes' : 'no',
    ]),
  );
}

/** The `jobdeck audit` table. */
export function renderAudit(rows: readonly AuditRow[]): string {
  return table(
    ['ID', 'TIME', 'ACTION', 'USER', 'TOKEN', 'IP', 'TARGET'],
    rows.map((r) => [String(r.id), r.at, r.action, dash(r.userName), dash(r.tokenPrefix), dash(r.ip), dash(r.target)]),
  );
}

function positiveId(raw: string, what: string): number {
  if (!/^[1-9][0-9]{0,9}$/.test(raw)) throw usageError(`${what} ${JSON.stringify(raw)}: expected a positive integer id`);
  return Number(raw);
}

/** `jobdeck tokens …`. */
function addTokens(program: Command, ctx: () => CliContext, run: Run): void {
  const t = program.command('tokens').summary('personal API tokens: create, list, revoke').description('Personal API tokens of the caller (admins: anyone\u2019s). A token is shown once, at create.');
  t.command('create')
    .summary('create a token; prints it once')
    .argument('<name>', 'a label (1–63 printable characters)')
    .option('--expires-in-days <N>', 'it stops working after N days (1–3650)')
    .option('--user <id>', 'admins: for another user (its id)')
    .option('--json', 'print JSON')
    .action(async (name: string, o: { expiresInDays?: string; user?: string; json?: boolean }) =>
      run(async () => {
        const days = o.expiresInDays === undefined ? undefined : Number(o.expiresInDays);
        if (days !== undefined && !(Number.isInteger(days) && days >= 1 && days <= 3650)) throw usageError('--expires-in-days: expected a whole number of days, 1–3650');
        const body = { name, ...(days ? { expiresInDays: days } : {}), ...(o.user ? { userId: positiveId(o.user, '--user') } : {}) };
        const r = await (await ctx().client()).request<TokenView & { token: string }>('POST', '/api/tokens', { body, what: 'token' });
        ctx().out(o.json ? JSON.stringify(r, null, 2) : `${renderTokens([r])}\n\nToken (shown only now): ${r.token}`);
        return EXIT.OK;
      }),
    );
  t.command('list')
    .summary('list tokens (prefix, name, created, last used, expiry)')
    .option('--all', 'admins: everyone\u2019s')
    .option('--json', 'print JSON')
    .action(async (o: { all?: boolean; json?: boolean }) =>
      run(async () => {
        const { tokens } = await (await ctx().client()).request<{ tokens: TokenView[] }>('GET', `/api/tokens${o.all ? '?all=1' : ''}`, { what: 'tokens' });
        ctx().out(o.json ? JSON.stringify(tokens, null, 2) : renderTokens(tokens));
        return EXIT.OK;
      }),
    );
  t.command('revoke')
    .summary('revoke a token: it fails from the next request, its streams close')
    .argument('<id>', 'token id (see `jobdeck tokens list`)')
    .action(async (id: string) =>
      run(async () => {
        await (await ctx().client()).request('DELETE', `/api/tokens/${positiveId(id, 'token')}`, { what: `token ${id}` });
        ctx().out(`Token ${id} revoked.`);
        return EXIT.OK;
      }),
    );
}

/** `jobdeck users …` (admins). */
function addUsers(program: Command, ctx: () => CliContext, run: Run): void {
  const u = program.command('users').summary('users and roles (admins): list, create, set-role, disable, enable');
  const patch = async (id: string, body: Record<string, unknown>, said: string) => {
    const r = await (await ctx().client()).request<UserView>('PATCH', `/api/users/${positiveId(id, 'user')}`, { body, what: `user ${id}` });
    ctx().out(`${said}\n${renderUsers([r])}`);
    return EXIT.OK;
  };
  u.command('list')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) =>
      run(async () => {
        const { users } = await (await ctx().client()).request<{ users: UserView[] }>('GET', '/api/users', { what: 'users' });
        ctx().out(o.json ? JSON.stringify(users, null, 2) : renderUsers(users));
        return EXIT.OK;
      }),
    );
  u.command('create')
    .argument('<name>', 'user name (a–z, 0–9, ., - and _)')
    .requiredOption('--role <role>', 'admin, member or viewer')
    .option('--password-stdin', 'read a password (8–256 characters) from stdin, for the login page')
    .action(async (name: string, o: { role: string; passwordStdin?: boolean }) =>
      run(async () => {
        if (!ROLES.includes(o.role)) throw usageError(`--role: expected ${ROLES.join(', ')}`);
        const password = o.passwordStdin ? (await readStdin()).replace(/\r?\n$/, '') : undefined;
        const r = await (await ctx().client()).request<UserView>('POST', '/api/users', { body: { name, role: o.role, ...(password ? { password } : {}) }, what: `user ${name}` });
        ctx().out(renderUsers([r]));
        return EXIT.OK;
      }),
    );
  u.command('set-role')
    .argument('<id>', 'user id')
    .argument('<role>', 'admin, member or viewer')
    .action(async (id: string, role: string) =>
      run(async () => {
        if (!ROLES.includes(role)) throw usageError(`role: expected ${ROLES.join(', ')}`);
        return patch(id, { role }, `User ${id} is now ${role}.`);
      }),
    );
  u.command('disable').argument('<id>', 'user id').action(async (id: string) => run(() => patch(id, { disabled: true }, `User ${id} disabled: its tokens and sessions stop working.`)));
  u.command('enable').argument('<id>', 'user id').action(async (id: string) => run(() => patch(id, { disabled: false }, `User ${id} enabled.`)));
}

async function readStdin(): Promise<string> {
  let s = '';
  for await (const chunk of process.stdin) {
    s += String(chunk);
    if (s.length > 4096) throw usageError('--password-stdin: more than 4096 characters on stdin');
  }
  return s;
}

/** `jobdeck audit` (admins). */
function addAudit(program: Command, ctx: () => CliContext, run: Run): void {
  program
    .command('audit')
    .summary('the audit log (admins): who did what, from where')
    .option('--action <action>', `only this action: ${ACTIONS.join(', ')}`)
    .option('--user <id>', 'only this user id')
    .option('--since <time>', 'ISO-8601 time, e.g. 2026-12-01T00:00:00Z')
    .option('--limit <N>', 'how many (1–500, default 100)')
    .option('--json', 'print JSON')
    .action(async (o: { action?: string; user?: string; since?: string; limit?: string; json?: boolean }) =>
      run(async () => {
        if (o.action && !ACTIONS.includes(o.action)) throw usageError(`--action: expected one of ${ACTIONS.join(', ')}`);
        const q = new URLSearchParams();
        if (o.action) q.set('action', o.action);
        if (o.user) q.set('userId', String(positiveId(o.user, '--user')));
        if (o.since) q.set('since', o.since);
        if (o.limit) q.set('limit', o.limit);
        const { events } = await (await ctx().client()).request<{ events: AuditRow[] }>('GET', `/api/audit${q.size ? `?${q}` : ''}`, { what: 'audit log' });
        ctx().out(o.json ? JSON.stringify(events, null, 2) : renderAudit(events));
        return EXIT.OK;
      }),
    );
}

/** Adds `tokens`, `users` and `audit` to the program. */
export function addTeam(program: Command, ctx: () => CliContext, run: Run): void {
  addTokens(program, ctx, run);
  addUsers(program, ctx, run);
  addAudit(program, ctx, run);
}
