/**
 * `jobdeck tokens create|list|revoke`, `jobdeck users list|create|set-role|disable|enable` and
 * `jobdeck audit`: personal API tokens, users and roles, and the audit log (the /api/tokens,
 * /api/users and /api/audit routes; docs/design.md §15). `tokens create` prints the token — the
 * only time it is shown.
 */
import Table from 'cli-table3';
import type { Command } from 'commander';
import type { AuditRow, CreatedTokenView, QuotaView, TokenView, UserView } from '../../api/types';
import { AUDIT_ACTIONS } from '../../jobs/audit-actions';
import type { JobdeckClient } from '../client';
import { CliError, usageError } from '../errors';
import type { CliContext } from '../context';
import { EXIT } from '../exit-codes';
import { PLAIN_CHARS } from './manage';

type Run = (fn: () => Promise<number>) => Promise<void>;
const ROLES = ['admin', 'member', 'viewer'];
const ACTIONS: readonly string[] = AUDIT_ACTIONS;

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

/** The `jobdeck users list` table (OS ACCOUNT: the account its jobs run as, `-` the run account; CPUS, GPUS and PENDING: the quotas that apply). */
export function renderUsers(us: readonly UserView[]): string {
  return table(
    ['ID', 'NAME', 'ROLE', 'LOGIN', 'OS ACCOUNT', 'CPUS', 'GPUS', 'PENDING', 'DISABLED'],
    us.map((u) => [
      String(u.id),
      u.name,
      u.role,
      [u.hasPassword ? 'password' : '', u.sso ? 'sso' : ''].filter(Boolean).join('+') || 'token',
      // An older server answers no `osUser`.
      dash(u.osUser ?? null),
      // An older server answers no `quotas`: the user's own values are all it has.
      quotaCell(u.quotas?.maxRunningCpus, u.maxRunningCpus),
      quotaCell(u.quotas?.maxRunningGpus, u.maxRunningGpus ?? null),
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

/**
 * The id of the user `raw` names: a user of that name (GET /api/users: admins), else a number as
 * an id — names first, since a name may be all digits.
 * @throws CliError NOT_FOUND naming the users when no user has that name and it is no id.
 */
async function userIdOf(client: JobdeckClient, raw: string, what: string): Promise<number> {
  const { users } = await client.request<{ users: UserView[] }>('GET', '/api/users', { what: 'users' });
  const byName = users.find((u) => u.name === raw);
  if (byName) return byName.id;
  if (/^[1-9][0-9]{0,9}$/.test(raw)) return Number(raw);
  throw new CliError(`${what} ${JSON.stringify(raw)}: no such user (users: ${users.map((u) => u.name).join(', ')})`, EXIT.NOT_FOUND);
}

/** `jobdeck tokens …`. */
function addTokens(program: Command, ctx: () => CliContext, run: Run): void {
  const t = program.command('tokens').summary('personal API tokens: create, list, revoke').description('Personal API tokens of the caller (admins: anyone\u2019s). A token is shown once, at create.');
  t.command('create')
    .summary('create a token; prints it once')
    .description('Create a personal token named NAME (for you, or an admin names the user with --user); it is printed this once.')
    .argument('<name>', 'a label (1–63 printable characters)')
    .option('--expires-in-days <N>', 'it stops working after N days (1–3650)')
    .option('--user <name>', 'admins: for another user (its name, or its id)')
    .option('--json', 'print JSON')
    .action(async (name: string, o: { expiresInDays?: string; user?: string; json?: boolean }) =>
      run(async () => {
        const days = o.expiresInDays === undefined ? undefined : Number(o.expiresInDays);
        if (days !== undefined && !(Number.isInteger(days) && days >= 1 && days <= 3650)) throw usageError('--expires-in-days: expected a whole number of days, 1–3650');
        const client = await ctx().client();
        const body = { name, ...(days ? { expiresInDays: days } : {}), ...(o.user ? { userId: await userIdOf(client, o.user, '--user') } : {}) };
        const r = await client.request<CreatedTokenView>('POST', '/api/tokens', { body, what: 'token' });
        ctx().out(o.json ? JSON.stringify(r, null, 2) : `${renderTokens([r])}\n\nToken (shown only now): ${r.token}`);
        return EXIT.OK;
      }),
    );
  t.command('list')
    .summary('list tokens (prefix, name, created, last used, expiry)')
    .description('Your tokens (admins with --all: everyone\u2019s): id, user, name, prefix, created, last used, expiry, revoked.')
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
    .description('Revoke token ID: it fails from the next request, and its open streams close.')
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
  const u = program
    .command('users')
    .summary('users and roles (admins): list, create, set-role, set-os-user, disable, enable')
    .description('The users (admins only): each with a role — admin, member or viewer — and how it logs in. A user is named by its name or its id.');
  const patch = async (user: string, body: Record<string, unknown>, said: (name: string) => string) => {
    const client = await ctx().client();
    const id = await userIdOf(client, user, 'user');
    const r = await client.request<UserView>('PATCH', `/api/users/${id}`, { body, what: `user ${user}` });
    ctx().out(`${said(r.name)}\n${renderUsers([r])}`);
    return EXIT.OK;
  };
  u.command('list')
    .summary('list the users, their roles, how they log in and their quotas')
    .description('Every user: id, name, role, how it logs in (password, single sign-on, a token only), its quotas, whether it is disabled.')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) =>
      run(async () => {
        const { users } = await (await ctx().client()).request<{ users: UserView[] }>('GET', '/api/users', { what: 'users' });
        ctx().out(o.json ? JSON.stringify(users, null, 2) : renderUsers(users));
        return EXIT.OK;
      }),
    );
  u.command('create')
    .summary('create a user with a role (and a password, from stdin)')
    .description('Create user NAME with --role; --password-stdin reads its password for the login page (else it logs in with a token an admin creates: `jobdeck tokens create --user NAME`).')
    .argument('<name>', 'user name (a–z, 0–9, ., - and _)')
    .requiredOption('--role <role>', 'admin, member or viewer')
    .option('--password-stdin', 'read a password (8–256 characters) from stdin, for the login page')
    .option('--os-user <account>', 'the OS account its jobs run as when isolation is on (it must exist on the server\u2019s machine)')
    .action(async (name: string, o: { role: string; passwordStdin?: boolean; osUser?: string }) =>
      run(async () => {
        if (!ROLES.includes(o.role)) throw usageError(`--role: expected ${ROLES.join(', ')}`);
        const password = o.passwordStdin ? (await readStdin()).replace(/\r?\n$/, '') : undefined;
        const body = { name, role: o.role, ...(password ? { password } : {}), ...(o.osUser !== undefined ? { osUser: o.osUser } : {}) };
        const r = await (await ctx().client()).request<UserView>('POST', '/api/users', { body, what: `user ${name}` });
        ctx().out(renderUsers([r]));
        return EXIT.OK;
      }),
    );
  u.command('set-role')
    .summary("change a user's role")
    .description('Make USER an admin, a member or a viewer; it holds from its next request.')
    .argument('<user>', 'user name (or id)')
    .argument('<role>', 'admin, member or viewer')
    .action(async (user: string, role: string) =>
      run(async () => {
        if (!ROLES.includes(role)) throw usageError(`role: expected ${ROLES.join(', ')}`);
        return patch(user, { role }, (name) => `User ${name} is now ${role}.`);
      }),
    );
  u.command('set-os-user')
    .summary('the OS account a user\u2019s jobs run as when isolation is on (`-`: none, the run account)')
    .description("Run USER's jobs as ACCOUNT, an OS account on the server's machine, when isolation is on (docs/design.md §16); `-`: none of its own, the run account.")
    .argument('<user>', 'user name (or id)')
    .argument('<account>', 'an OS account on the server\u2019s machine, or - for none')
    .action(async (user: string, account: string) =>
      run(() => patch(user, { osUser: account === '-' ? null : account }, (name) => (account === '-' ? `User ${name}'s jobs run as the run account.` : `User ${name}'s jobs run as ${account}.`))),
    );
  u.command('disable')
    .summary('disable a user: its tokens and sessions stop working')
    .description('Disable USER: its tokens and sessions stop working at once; its jobs stay.')
    .argument('<user>', 'user name (or id)')
    .action(async (user: string) => run(() => patch(user, { disabled: true }, (name) => `User ${name} disabled: its tokens and sessions stop working.`)));
  u.command('enable')
    .summary('enable a disabled user again')
    .description('Enable USER again: it may log in and be given new tokens; its old tokens and sessions stay ended.')
    .argument('<user>', 'user name (or id)')
    .action(async (user: string) => run(() => patch(user, { disabled: false }, (name) => `User ${name} enabled (its old tokens and sessions stay ended: give it new ones).`)));
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
    .description('The audit log, newest first (admins only): time, action, user, token prefix, address, target.')
    .option('--action <action>', `only this action: ${ACTIONS.join(', ')}`)
    .option('--user <name>', 'only this user (its name, or its id)')
    .option('--since <time>', 'ISO-8601 time, e.g. 2026-12-01T00:00:00Z')
    .option('--limit <N>', 'how many (1–500, default 100)')
    .option('--json', 'print JSON')
    .action(async (o: { action?: string; user?: string; since?: string; limit?: string; json?: boolean }) =>
      run(async () => {
        if (o.action && !ACTIONS.includes(o.action)) throw usageError(`--action: expected one of ${ACTIONS.join(', ')}`);
        const client = await ctx().client();
        const q = new URLSearchParams();
        if (o.action) q.set('action', o.action);
        if (o.user) q.set('userId', String(await userIdOf(client, o.user, '--user')));
        if (o.since) q.set('since', o.since);
        if (o.limit) q.set('limit', o.limit);
        const { events } = await client.request<{ events: AuditRow[] }>('GET', `/api/audit${q.size ? `?${q}` : ''}`, { what: 'audit log' });
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
