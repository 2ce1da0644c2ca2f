/**
 * When stdout is not a terminal (a pipe, a file, a service manager), the server's first lines are
 * plain text a person reads — where it listens and how to log in — and its JSON logs follow,
 * all of them, in order. A real server process (tests/helpers/server.ts pipes its output).
 *
 * Needs a built app (as every test that starts a server).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../helpers/server';
import { waitFor } from './monitor-helpers';

const started: ServerProcess[] = [];
const homes: string[] = [];
afterEach(async () => {
  for (const s of started.splice(0)) await s.dispose({ keepHome: true });
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

const isJson = (l: string) => {
  try {
    return typeof JSON.parse(l) === 'object';
  } catch {
    return false;
  }
};

describe('the server\'s first lines, not on a terminal', () => {
  it('are a plain "listening" line and the login line, before every JSON log line', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-first-lines-'));
    homes.push(home);
    const s = await startServerProcess({ home, env: { JOBDECK_TOKEN: '' } });
    started.push(s);
    // The helper returns as soon as "listening" arrived; the held JSON lines may be a read behind.
    await waitFor(async () => s.output().includes('"msg":"jobdeck listening on'), 'the JSON lines');
    const lines = s.output().split('\n').filter((l) => l.trim() !== '');
    const firstJson = lines.findIndex(isJson);
    const plain = lines.slice(0, firstJson);
    const port = new URL(s.url).port;
    expect(plain).toContain(`jobdeck listening on http://127.0.0.1:${port} (database: pglite)`);
    const login = plain.find((l) => l.includes('to log in, open'));
    expect(login).toMatch(new RegExp(`^created an admin token in ${home.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/token; to log in, open http://127\\.0\\.0\\.1:${port}/login\\?token=jd_[A-Za-z0-9_-]{43}$`));
    expect(plain.indexOf(`jobdeck listening on http://127.0.0.1:${port} (database: pglite)`)).toBeLessThan(plain.indexOf(login!));

    // The JSON logs held back meanwhile follow in their order, the start-up's first.
    const json = lines.slice(firstJson).filter(isJson).map((l) => JSON.parse(l) as { msg: string });
    const msgs = json.map((j) => j.msg);
    expect(msgs.indexOf('database open')).toBeGreaterThanOrEqual(0);
    expect(msgs.indexOf('database open')).toBeLessThan(msgs.findIndex((m) => m.startsWith('jobdeck listening on')));
    // Later lines come as they happen, after the held ones.
    await s.stop();
    expect(s.output().trimEnd().split('\n').filter(isJson).map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain('stopping (running jobs keep running)');
    // The token is in that one plain line only, never in a JSON log line (logs are kept and shipped).
    const token = readFileSync(path.join(home, 'token'), 'utf8').trim();
    expect(s.output().split('\n').filter((l) => l.includes(token))).toEqual([login]);

    // A later start prints where to log in, without the token anywhere.
    const again = await startServerProcess({ home, token, env: { JOBDECK_TOKEN: '' } });
    started.push(again);
    await waitFor(async () => again.output().includes('"msg":"jobdeck listening on'), 'the JSON lines');
    const againPort = new URL(again.url).port;
    expect(again.output()).toContain(`to log in, open http://127.0.0.1:${againPort}/login and paste the token in ${home}/token\n`);
    expect(again.output()).not.toContain(token);
  });
});
