/**
 * OIDC single sign-on against a REAL provider (the oidc-provider package, in its own process:
 * tests/helpers/oidc-provider.mjs) and a real jobdeck server on each database: the whole
 * authorization-code flow driven over HTTP (redirects followed by hand, the provider's login form
 * filled), the role mapped from the groups claim, and the refusals — a replayed code, a wrong
 * state, a code issued to another client (wrong audience), no flow cookie, a provider whose
 * metadata names another issuer, an ID token whose signature verifies but whose `aud` or `iss`
 * claim is another's (the provider's token answer forged with its own key) — each audited as one
 * `login.failed` row.
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=.next-oidc npx next build`, and the same JOBDECK_NEXT_DIST.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { CookieJar, follow, freePort, startOidcProvider, type OidcProvider } from '../helpers/oidc';
import { startServerProcess, type ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';

const SECRET = 'jobdeck-test-client-secret';
const ACCOUNTS = {
  alice: { password: 'alice-pw', groups: ['devs'] },
  bob: { password: 'bob-pw', groups: ['admins', 'devs'] },
  carol: { password: 'carol-pw', groups: ['visitors'] },
  erin: { password: 'erin-pw', groups: ['devs'] },
};

/** Fills the provider's login form; answers the jobdeck callback URL the provider redirects to. */
async function signInAtProvider(jar: CookieJar, provider: OidcProvider, authUrl: string, base: string, user: keyof typeof ACCOUNTS): Promise<string> {
  const page = await follow(jar, authUrl, base);
  expect(page.res.status).toBe(200);
  const html = await page.res.text();
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  expect(action, html).toBeTruthy();
  const form = new URLSearchParams({ username: user, password: ACCOUNTS[user].password });
  const posted = await jar.fetch(new URL(action!, provider.url).href, { method: 'POST', body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  expect(posted.status).toBeGreaterThanOrEqual(300);
  const done = await follow(jar, new URL(posted.headers.get('location')!, provider.url).href, base);
  expect(done.url.startsWith(`${base}/api/auth/oidc/callback?`), done.url).toBe(true);
  return done.url;
}

/** Starts a login at jobdeck; answers the provider URL it redirects to. */
async function start(jar: CookieJar, base: string): Promise<string> {
  const res = await jar.fetch(`${base}/api/auth/oidc/start?next=/jobs`);
  expect(res.status).toBe(302);
  return res.headers.get('location')!;
}

async function auditRows(server: ServerProcess, action: string): Promise<Array<{ userName: string | null; detail: Record<string, unknown> | null }>> {
  const res = await server.api(`/api/audit?action=${action}&limit=200`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { events: Array<{ userName: string | null; detail: Record<string, unknown> | null }> }).events;
}

describe.each(DB_KINDS)('OIDC single sign-on (%s)', (kind) => {
  const fixture = useServerDatabase(kind, 'oidc-login');
  let provider: OidcProvider;
  let server: ServerProcess;
  let base: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const redirect_uris = [`${base}/api/auth/oidc/callback`];
    provider = await startOidcProvider({
      clients: [
        { client_id: 'jobdeck', client_secret: SECRET, redirect_uris },
        { client_id: 'someone-else', client_secret: SECRET, redirect_uris },
      ],
      accounts: ACCOUNTS,
    });
    server = await fixture.start({
      port,
      env: {
        JOBDECK_OIDC_ISSUER: provider.issuer,
        JOBDECK_OIDC_CLIENT_ID: 'jobdeck',
        JOBDECK_OIDC_CLIENT_SECRET: SECRET,
        JOBDECK_OIDC_ROLES: 'admins=admin,devs=member',
        JOBDECK_OIDC_LABEL: 'Test IdP',
      },
    });
  });

  afterAll(async () => {
    await provider?.stop();
  });

  it('says at start which redirect URI to register at the provider', async () => {
    // The JSON log is written asynchronously: wait for the line rather than race it.
    await expect.poll(() => server.output(), { timeout: 120_000 }).toContain(`single sign-on with ${provider.issuer}; its redirect URI is ${base}/api/auth/oidc/callback`);
  });

  it('logs a provider user in with the role its group maps to, once per code', async () => {
    const jar = new CookieJar();
    const callback = await signInAtProvider(jar, provider, await start(jar, base), base, 'alice');
    const flowCookie = jar.header(base);
    const res = await jar.fetch(callback);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.text()).toContain('url=/jobs');
    const me = await jar.fetch(`${base}/api/users/me`);
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ name: 'alice', role: 'member' });
    const users = (await (await server.api('/api/users')).json()) as { users?: Array<{ name: string; sso: boolean }> } | Array<{ name: string; sso: boolean }>;
    const list = Array.isArray(users) ? users : (users.users ?? []);
    expect(list.find((u) => u.name === 'alice')?.sso).toBe(true);

    // The same code again (with the flow cookie it came with): the provider refuses it.
    const replay = await fetch(callback, { redirect: 'manual', headers: { cookie: flowCookie } });
    expect(replay.status).toBe(401);
    expect(((await replay.json()) as { detail: string }).detail).toMatch(/could not be verified/);

    const logins = (await auditRows(server, 'login')).filter((r) => r.userName === 'alice');
    expect(logins).toHaveLength(1);
    expect(logins[0].detail).toMatchObject({ via: 'oidc' });
  });

  it('gives the highest mapped role, and refuses a user no group maps', async () => {
    const jar = new CookieJar();
    const ok = await jar.fetch(await signInAtProvider(jar, provider, await start(jar, base), base, 'bob'));
    expect(ok.status).toBe(200);
    expect(await (await jar.fetch(`${base}/api/users/me`)).json()).toMatchObject({ name: 'bob', role: 'admin' });

    const before = (await auditRows(server, 'login.failed')).length;
    const jar2 = new CookieJar();
    const no = await jar2.fetch(await signInAtProvider(jar2, provider, await start(jar2, base), base, 'carol'));
    expect(no.status).toBe(401);
    expect(((await no.json()) as { detail: string }).detail).toMatch(/no role is mapped/);
    expect((await auditRows(server, 'login.failed')).length).toBe(before + 1);
    expect((await jar2.fetch(`${base}/api/users/me`)).status).toBe(401);
  });

  it('never takes over a local user of the same name, refuses a disabled user, and a provider error', async () => {
    const before = (await auditRows(server, 'login.failed')).length;
    expect((await server.api('/api/users', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'erin', role: 'admin', password: 'local-password-1' }) })).status).toBe(201);
    const jar = new CookieJar();
    const taken = await jar.fetch(await signInAtProvider(jar, provider, await start(jar, base), base, 'erin'));
    expect(taken.status).toBe(401);
    expect(((await taken.json()) as { detail: string }).detail).toMatch(/belongs to another jobdeck user/);

    const users = (await (await server.api('/api/users')).json()) as Array<{ id: number; name: string }> | { users: Array<{ id: number; name: string }> };
    const alice = (Array.isArray(users) ? users : users.users).find((u) => u.name === 'alice')!;
    expect((await server.api(`/api/users/${alice.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ disabled: true }) })).status).toBe(200);
    const jar2 = new CookieJar();
    const disabled = await jar2.fetch(await signInAtProvider(jar2, provider, await start(jar2, base), base, 'alice'));
    expect(disabled.status).toBe(401);
    expect(((await disabled.json()) as { detail: string }).detail).toMatch(/disabled/);
    expect((await server.api(`/api/users/${alice.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ disabled: false }) })).status).toBe(200);

    const denied = await fetch(`${base}/api/auth/oidc/callback?error=access_denied&state=x`, { redirect: 'manual' });
    expect(denied.status).toBe(401);
    expect(((await denied.json()) as { detail: string }).detail).toMatch(/refused the login: access_denied/);
    expect((await auditRows(server, 'login.failed')).length).toBe(before + 3);
  });

  it('refuses a wrong state, a wrong issuer in the response, a code issued to another client, and a callback without a flow', async () => {
    const before = (await auditRows(server, 'login.failed')).length;

    const jar = new CookieJar();
    const callback = new URL(await signInAtProvider(jar, provider, await start(jar, base), base, 'alice'));
    callback.searchParams.set('state', 'not-the-state-jobdeck-sent');
    const wrongState = await jar.fetch(callback.href);
    expect(wrongState.status).toBe(401);
    expect(((await wrongState.json()) as { detail: string }).detail).toMatch(/state/i);

    // The authorization response names another issuer (RFC 9207 `iss`): a mix-up, refused.
    const jarIss = new CookieJar();
    const crossed = new URL(await signInAtProvider(jarIss, provider, await start(jarIss, base), base, 'alice'));
    expect(crossed.searchParams.get('iss')).toBe(provider.issuer);
    crossed.searchParams.set('iss', 'https://idp.attacker.example');
    const wrongIss = await jarIss.fetch(crossed.href);
    expect(wrongIss.status).toBe(401);
    expect(((await wrongIss.json()) as { detail: string }).detail).toMatch(/could not be verified/);
    expect((await jarIss.fetch(`${base}/api/users/me`)).status).toBe(401);

    // The provider signs in for another client (audience "someone-else"): jobdeck's exchange is refused.
    const jar2 = new CookieJar();
    const authUrl = new URL(await start(jar2, base));
    authUrl.searchParams.set('client_id', 'someone-else');
    const other = await jar2.fetch(await signInAtProvider(jar2, provider, authUrl.href, base, 'alice'));
    expect(other.status).toBe(401);
    expect(((await other.json()) as { detail: string }).detail).toMatch(/could not be verified/);
    expect((await jar2.fetch(`${base}/api/users/me`)).status).toBe(401);

    const noFlow = await fetch(`${base}/api/auth/oidc/callback?code=abc&state=def`, { redirect: 'manual' });
    expect(noFlow.status).toBe(400);
    expect(((await noFlow.json()) as { detail: string }).detail).toMatch(/no login in progress/);

    const failed = await auditRows(server, 'login.failed');
    expect(failed.length).toBe(before + 4);
    expect(failed.slice(0, 4).every((r) => r.detail?.via === 'oidc')).toBe(true);
  });

  it("refuses an ID token signed with the provider's key but naming another audience or issuer", async () => {
    try {
      // The control: the provider's token signed again, unchanged, still logs in.
      await provider.forgeIdToken('resign');
      const ok = new CookieJar();
      const resigned = await ok.fetch(await signInAtProvider(ok, provider, await start(ok, base), base, 'alice'));
      expect(resigned.status, await resigned.clone().text()).toBe(200);

      for (const [mode, claim, browser] of [
        ['aud', /"aud"/, false],
        ['iss', /"iss"/, true],
      ] as const) {
        await provider.forgeIdToken(mode);
        const before = (await auditRows(server, 'login.failed')).length;
        const jar = new CookieJar();
        const callback = await signInAtProvider(jar, provider, await start(jar, base), base, 'alice');
        const res = await jar.fetch(callback, browser ? { headers: { accept: 'text/html' } } : {});
        if (browser) {
          // A browser is sent back to the login page with the error.
          expect([res.status, res.headers.get('location')], mode).toEqual([303, '/login?error=sso']);
        } else {
          expect(res.status, mode).toBe(401);
          const detail = ((await res.json()) as { detail: string }).detail;
          expect(detail).toMatch(/could not be verified/);
          expect(detail).toMatch(claim);
        }
        expect((await jar.fetch(`${base}/api/users/me`)).status, mode).toBe(401);
        const failed = await auditRows(server, 'login.failed');
        expect(failed.length, mode).toBe(before + 1);
        expect(failed[0].detail, mode).toMatchObject({ via: 'oidc' });
        expect(String(failed[0].detail?.reason ?? ''), mode).toMatch(claim);
      }
    } finally {
      await provider.forgeIdToken('off');
    }
  });
});

describe('OIDC settings at start', () => {
  it('refuses a provider whose metadata names another issuer', async () => {
    // Reached at 127.0.0.1, but its metadata says "localhost": a mix-up the library must catch.
    const port = await freePort();
    const impostor = await startOidcProvider({ clients: [{ client_id: 'jobdeck', client_secret: SECRET, redirect_uris: [`http://127.0.0.1:${port}/api/auth/oidc/callback`] }], accounts: ACCOUNTS, issuerHost: 'localhost' });
    try {
      const other = await startServerProcess({ port, env: { JOBDECK_OIDC_ISSUER: impostor.url, JOBDECK_OIDC_CLIENT_ID: 'jobdeck', JOBDECK_OIDC_CLIENT_SECRET: SECRET } });
      const res = await fetch(`${other.url}/api/auth/oidc/start`, { redirect: 'manual' });
      expect(res.status).toBe(502);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/issuer/i);
      await other.dispose();
    } finally {
      await impostor.stop();
    }
  });
  it('a missing client secret stops the start, naming the variable', async () => {
    await expect(startServerProcess({ env: { JOBDECK_OIDC_ISSUER: 'https://idp.example', JOBDECK_OIDC_CLIENT_ID: 'jobdeck' } })).rejects.toThrow(/JOBDECK_OIDC_CLIENT_SECRET/);
  });
});
