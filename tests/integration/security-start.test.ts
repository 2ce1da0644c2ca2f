/**
 * Start-up security, against real server processes:
 * - HOST=0.0.0.0 without JOBDECK_TOKEN refuses to start (non-zero exit, a message saying why and
 *   what to do) and touches nothing; with JOBDECK_TOKEN it starts and the token is required.
 * - First start without JOBDECK_TOKEN creates the token file (0600) and its hash, prints a login
 *   URL that logs in; the file is not the stored hash; a restart keeps the same token.
 *
 * Runs on PGlite only: all of this happens before or independently of the database (the refusal
 * happens before it opens); security-auth covers both database kinds.
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=.next-security npx next build`.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cookieFrom } from '../helpers/security';
import { startServerProcess, type ServerProcess } from '../helpers/server';

const started: ServerProcess[] = [];
const homes: string[] = [];
function freshHome(): string {
  const h = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-sec-start-'));
  homes.push(h);
  return h;
}
afterEach(async () => {
  for (const s of started.splice(0)) await s.dispose({ keepHome: true });
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

describe('binding policy at start', () => {
  it.each(['0.0.0.0', '::'])('refuses HOST=%s without a configured token, and touches nothing', async (host) => {
    const home = freshHome();
    // No database template either: the folder must stay as empty as it was given.
    const err = await startServerProcess({ home, env: { HOST: host, JOBDECK_TOKEN: '' }, pgliteTemplate: false }).then(
      (s) => {
        started.push(s);
        return null;
      },
      (e: Error) => e,
    );
    expect(err, 'the server started').not.toBeNull();
    expect(err!.message).toMatch(/server exited with 1 before listening/);
    expect(err!.message).toMatch(/refusing to listen on/);
    expect(err!.message).toMatch(/not a loopback address/);
    expect(err!.message).toMatch(/JOBDECK_TOKEN/);
    // Nothing was created: no token, no database.
    expect(readdirSync(home)).toEqual([]);
  });

  it('starts on 0.0.0.0 with JOBDECK_TOKEN, and requires it', async () => {
    const home = freshHome();
    const s = await startServerProcess({ home, env: { HOST: '0.0.0.0' } });
    started.push(s);
    const port = new URL(s.url).port;
    const local = `http://127.0.0.1:${port}`;
    expect((await fetch(`${local}/api/health`)).status).toBe(200);
    expect((await fetch(`${local}/api/jobs`)).status).toBe(401);
    expect((await fetch(`${local}/api/jobs`, { headers: { authorization: `Bearer ${s.token}` } })).status).toBe(200);
    // Explicit token: nothing generated, and the token is not echoed into the log.
    expect(existsSync(path.join(home, 'token'))).toBe(false);
    expect(s.output()).not.toContain(s.token);
    expect(s.output()).toMatch(/to log in, open http:\/\/127\.0\.0\.1:\d+\/login and paste the token from JOBDECK_TOKEN/);
  });

  it('refuses a too-short JOBDECK_TOKEN', async () => {
    const err = await startServerProcess({ home: freshHome(), token: 'short' }).then(
      (s) => {
        started.push(s);
        return null;
      },
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/JOBDECK_TOKEN: the token is 5 characters long; use at least 16/);
  });
});

describe('first start without JOBDECK_TOKEN', () => {
  it('creates a 0600 token file, prints a working login URL, stores only a hash, keeps the token across restarts', async () => {
    const home = path.join(freshHome(), 'data');
    const s = await startServerProcess({ home, env: { JOBDECK_TOKEN: '' } });
    started.push(s);

    const tokenFile = path.join(home, 'token');
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    const token = readFileSync(tokenFile, 'utf8').trim();
    expect(token).toMatch(/^jd_[A-Za-z0-9_-]{43}$/);
    const stored = readFileSync(path.join(home, 'token.sha256'), 'utf8').trim();
    expect(stored).toBe(createHash('sha256').update(token).digest('hex'));
    expect(token).not.toBe(stored);

    const m = /to log in, open (http:\/\/127\.0\.0\.1:\d+\/login\?token=[^\s"]+)/.exec(s.output());
    expect(m, s.output()).not.toBeNull();
    const loginUrl = m![1];
    expect(new URL(loginUrl).searchParams.get('token')).toBe(token);
    expect(new URL(loginUrl).origin).toBe(new URL(s.url).origin);

    // The printed URL logs a browser in.
    const res = await fetch(loginUrl, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
    const cookie = cookieFrom(res)!;
    expect((await fetch(`${s.url}/api/jobs`, { headers: { cookie } })).status).toBe(200);
    // The token works as a bearer token (what the CLI sends after readLocalToken()).
    expect((await fetch(`${s.url}/api/jobs`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await fetch(`${s.url}/api/jobs`, { headers: { authorization: `Bearer ${stored}` } })).status).toBe(401);
    expect((await fetch(`${s.url}/api/jobs`)).status).toBe(401);

    // Restart on the same data: same token, no new one; the browser session survives too.
    await s.stop();
    const s2 = await startServerProcess({ home, env: { JOBDECK_TOKEN: '' } });
    started.push(s2);
    expect(readFileSync(tokenFile, 'utf8').trim()).toBe(token);
    // The token is printed once, at the first start (docs/security.md): a restart names the file.
    expect(s2.output()).not.toContain(token);
    expect(s2.output()).toContain(`paste the token in ${tokenFile}`);
    expect(s2.output()).not.toMatch(/created an admin token/);
    expect((await fetch(`${s2.url}/api/jobs`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await fetch(`${s2.url}/api/jobs`, { headers: { cookie } })).status).toBe(200);
  });
});
