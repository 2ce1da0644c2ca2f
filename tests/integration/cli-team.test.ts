/**
 * `jobdeck tokens`, `jobdeck users` and `jobdeck audit` (lib/cli/commands/team.ts) as a user runs
 * them: the real command (bin/jobdeck.mjs) against a real server on each database. `tokens create`
 * prints the token once; `tokens list` shows its prefix and never the token; `tokens revoke`
 * makes it fail; `users create` / `set-role` / `disable` / `enable` change what the user may do;
 * `users list` shows the quotas that apply, a role's default marked; `audit` filters by action,
 * prints JSON with `--json`, and is an admin's only. Bad input exits 2 with what was wrong.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes';
import { DB_KINDS } from '../helpers/db';
import { useOsAccounts } from '../helpers/os-accounts';
import type { ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';
import { runCli, show, type CliRun } from './cli-run';

interface UserJson {
  id: number;
  name: string;
  role: string;
}
interface AuditJson {
  action: string;
  userName: string | null;
  tokenPrefix: string | null;
  target: string | null;
}

describe.each(DB_KINDS)('jobdeck tokens, users and audit (%s)', (kind) => {
  const database = useServerDatabase(kind, 'cli-team');
  useOsAccounts([`jdc-${kind.slice(0, 4)}`]);
  let server: ServerProcess;
  let miaId = 0;

  /** `jobdeck ARGS` as the admin, or with `token`; `input` on stdin. */
  const cli = (args: string[], token?: string, input?: string) => runCli(server, args, { env: token ? { JOBDECK_TOKEN: token } : {}, input });
  const ok = (r: CliRun) => {
    expect(r.code, show(r)).toBe(EXIT.OK);
    return r.stdout;
  };
  /** A token for mia made by the admin (`--json`, `--user` by her name): the token and its id. */
  const tokenForMia = async (name: string) => JSON.parse(ok(await cli(['tokens', 'create', name, '--user', 'mia', '--json']))) as { id: number; token: string; prefix: string };

  beforeAll(async () => {
    server = await database.start({ env: { JOBDECK_QUOTA_MEMBER_PENDING_JOBS: '5' } });
    const created = ok(await cli(['users', 'create', 'mia', '--role', 'member', '--password-stdin'], undefined, 'mia-password-123\n'));
    expect(created).toMatch(/^ID\s+NAME\s+ROLE\s+LOGIN\s+OS ACCOUNT\s+CPUS\s+GPUS\s+PENDING\s+DISABLED$/m);
    expect(created).toMatch(/\bmia\s+member\s+password\s+-\s+-\s+-\s+5 \(role\)\s+no$/m);
    miaId = (JSON.parse(ok(await cli(['users', 'list', '--json']))) as UserJson[]).find((u) => u.name === 'mia')!.id;
  });

  it('tokens: create prints the token once, list shows its prefix only, revoke makes it fail', async () => {
    const created = await cli(['tokens', 'create', 'laptop', '--user', String(miaId)]);
    const out = ok(created);
    const token = /^Token \(shown only now\): (jdp_[A-Za-z0-9_-]{43})$/m.exec(out)?.[1];
    expect(token, out).toBeDefined();
    expect(out.split(token!).length - 1).toBe(1);
    expect(out).toMatch(new RegExp(`\\bmia\\s+laptop\\s+${token!.slice(0, 12)}\\s`));

    // mia's own list, as a table and as JSON: the prefix, never the token or any of it past the prefix.
    const asMia = (args: string[]) => cli(args, token);
    for (const listed of [ok(await asMia(['tokens', 'list'])), ok(await asMia(['tokens', 'list', '--json']))]) {
      expect(listed).toContain('laptop');
      expect(listed).toContain(token!.slice(0, 12));
      expect(listed).not.toContain(token!.slice(12, 20));
    }
    const id = (JSON.parse(ok(await asMia(['tokens', 'list', '--json']))) as Array<{ id: number; name: string }>).find((t) => t.name === 'laptop')!.id;
    expect(ok(await asMia(['queue', '--json']))).toMatch(/^\[/);
    expect(ok(await asMia(['tokens', 'revoke', String(id)]))).toBe(`Token ${id} revoked.\n`);
    const refused = await asMia(['queue']);
    expect(refused.code, show(refused)).toBe(EXIT.UNAUTHORIZED);
    // The admin's list of everyone's tokens says it was revoked.
    expect(ok(await cli(['tokens', 'list', '--all']))).toMatch(new RegExp(`^${id}\\s+mia\\s+laptop\\s+${token!.slice(0, 12)}\\s.*\\d{4}-\\d\\d-\\d\\dT\\S+$`, 'm'));

    const bad = await cli(['tokens', 'create', 'x', '--expires-in-days', '0']);
    expect([bad.code, bad.stderr]).toEqual([EXIT.USAGE, expect.stringMatching(/--expires-in-days: expected a whole number of days, 1–3650/)]);
    const badId = await cli(['tokens', 'revoke', 'abc']);
    expect([badId.code, badId.stderr]).toEqual([EXIT.USAGE, expect.stringMatching(/token "abc": expected a positive integer id/)]);
  });

  it('users: set-role changes what the user may do; disable ends its tokens for good, enable lets it have new ones', async () => {
    const { token } = await tokenForMia('roles');
    const submit = () => cli(['launch', '-d', '--cmd', 'true', '-n', 'by-mia'], token);
    expect(ok(await submit())).toMatch(/Job submitted, ID: \d+/);

    // A user is named by its name, or by its id; the answer names the user.
    expect(ok(await cli(['users', 'set-role', 'mia', 'viewer']))).toMatch(/^User mia is now viewer\.\n[\s\S]*\bmia\s+viewer\s/);
    const asViewer = await submit();
    // A role refusal is "forbidden" (exit 12), not a refused token (exit 7).
    expect(asViewer.code, show(asViewer)).toBe(EXIT.FORBIDDEN);
    expect(asViewer.stderr).toMatch(/forbidden: POST \/api\/jobs needs the member role; you are viewer/);
    expect(ok(await cli(['users', 'set-role', String(miaId), 'member']))).toMatch(/is now member/);
    const badRole = await cli(['users', 'set-role', String(miaId), 'owner']);
    expect([badRole.code, badRole.stderr]).toEqual([EXIT.USAGE, expect.stringMatching(/role: expected admin, member, viewer/)]);
    const nobody = await cli(['users', 'set-role', 'mai', 'viewer']);
    expect([nobody.code, nobody.stderr]).toEqual([EXIT.NOT_FOUND, expect.stringMatching(/user "mai": no such user \(users: admin, mia\)/)]);

    expect(ok(await cli(['users', 'disable', 'mia']))).toMatch(/disabled: its tokens and sessions stop working[\s\S]*\bmia\s+member\s.*\byes$/m);
    expect((await cli(['queue'], token)).code).toBe(EXIT.UNAUTHORIZED);
    expect(ok(await cli(['users', 'enable', String(miaId)]))).toMatch(/enabled \(its old tokens and sessions stay ended: give it new ones\)[\s\S]*\bmia\s+member\s.*\bno$/m);
    // The old token stays ended; a new one works.
    const old = await cli(['queue'], token);
    expect([old.code, old.stderr]).toEqual([EXIT.UNAUTHORIZED, expect.stringMatching(/was ended when its user was disabled/)]);
    const fresh = (await tokenForMia('after-enable')).token;
    expect(ok(await cli(['queue', '--json'], fresh))).toMatch(/by-mia/);
    // A member may not manage users.
    expect((await cli(['users', 'list'], fresh)).code).toBe(EXIT.FORBIDDEN);
  });

  it('audit: filters by action, prints JSON, and is an admin\u2019s only', async () => {
    const json = JSON.parse(ok(await cli(['audit', '--action', 'token.create', '--json']))) as AuditJson[];
    expect(json.length).toBeGreaterThanOrEqual(2);
    expect(new Set(json.map((r) => r.action))).toEqual(new Set(['token.create']));
    expect(json.every((r) => r.userName === 'admin' && r.tokenPrefix === server.token.slice(0, 12) && /^token:\d+$/.test(r.target ?? ''))).toBe(true);

    const table = ok(await cli(['audit', '--action', 'user.update']));
    const lines = table.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+TIME\s+ACTION\s+USER\s+TOKEN\s+IP\s+TARGET$/);
    // set-role twice, disable, enable: newest first, every row the one action.
    expect(lines.slice(1)).toHaveLength(4);
    for (const l of lines.slice(1)) expect(l).toMatch(new RegExp(`^\\d+\\s+\\S+\\s+user\\.update\\s+admin\\s+${server.token.slice(0, 12)}\\s+\\S*127\\.0\\.0\\.1\\s+user:${miaId}$`));
    expect(ok(await cli(['audit', '--action', 'user.update', '--limit', '1', '--json']))).toMatch(/"action": "user.update"/);
    // --user names whose rows: the admin's are all of these; mia did none of them.
    expect((JSON.parse(ok(await cli(['audit', '--action', 'user.update', '--user', 'admin', '--json']))) as AuditJson[]).length).toBe(4);
    expect(JSON.parse(ok(await cli(['audit', '--action', 'user.update', '--user', 'mia', '--json'])))).toEqual([]);

    const bad = await cli(['audit', '--action', 'job.launch']);
    expect([bad.code, bad.stderr]).toEqual([EXIT.USAGE, expect.stringMatching(/--action: expected one of job\.submit, /)]);
    const { token } = await tokenForMia('audit');
    const member = await cli(['audit'], token);
    expect(member.code, show(member)).toBe(EXIT.FORBIDDEN);
    expect(member.stderr).toMatch(/^error: forbidden: GET \/api\/audit needs the admin role/m);
  });

  it('users: set-os-user maps a user to an OS account that exists (never root), and - clears it', async () => {
    const account = `jdc-${kind.slice(0, 4)}`;
    const osUserOf = async () => (JSON.parse(ok(await cli(['users', 'list', '--json']))) as Array<UserJson & { osUser: string | null }>).find((u) => u.id === miaId)!.osUser;
    ok(await cli(['users', 'set-os-user', String(miaId), account]));
    expect(await osUserOf()).toBe(account);
    for (const bad of ['jdc-nobody-here', 'root']) {
      const r = await cli(['users', 'set-os-user', String(miaId), bad]);
      expect(r.code, show(r)).not.toBe(0);
      expect(r.stderr).toMatch(/osUser/);
    }
    expect(await osUserOf()).toBe(account);
    ok(await cli(['users', 'set-os-user', String(miaId), '-']));
    expect(await osUserOf()).toBeNull();
  });
});
