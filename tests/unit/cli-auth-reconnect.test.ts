/**
 * Two things a CLI user meets when something is off: a refused token says where the CLI looked
 * for it (flag, JOBDECK_TOKEN, the token file — or that there was none), through the real REST
 * client against a local HTTP server that answers 401; and the follow's reconnect rhythm —
 * the first retry well under a second, a low cap while the server said it is restarting, and a
 * 5-minute limit by default (lib/cli/follow.ts ReconnectPlan).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobdeckClient } from '../../lib/cli/client';
import { displayPath, resolveConnection, resolveTokenSource, tokenRefusedHint } from '../../lib/cli/config';
import { CliError } from '../../lib/cli/errors';
import { EXIT } from '../../lib/cli/exit-codes';
import { DEFAULT_FOLLOW_RECONNECT_MS, ReconnectPlan, RESTART_BACKOFF_MAX_MS, RESTART_CLOSE_CODES, type Attempt } from '../../lib/cli/follow';
import { parseDuration } from '../../lib/cli/commands/resolve';

const asEnv = (e: Record<string, string>) => e as unknown as NodeJS.ProcessEnv;

describe('a refused token says where the CLI looked', () => {
  let server: http.Server;
  let url: string;
  let home: string;
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ title: 'Unauthorized', status: 401, detail: 'missing or invalid token' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    home = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-cli-auth-'));
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(home, { recursive: true, force: true });
  });

  async function queueError(env: Record<string, string>, flags: { token?: string } = {}): Promise<CliError> {
    const conn = await resolveConnection({ url, ...flags }, asEnv(env));
    try {
      await new JobdeckClient(conn).list({});
    } catch (err) {
      if (err instanceof CliError) return err;
      throw err;
    }
    throw new Error('expected a refusal');
  }

  it('no token anywhere: names the token file it looked for and the two ways to fix it', async () => {
    const err = await queueError({ JOBDECK_HOME: path.join(home, 'nowhere') });
    expect(err.exitCode).toBe(EXIT.UNAUTHORIZED);
    expect(err.message).toBe(`no token found at ${displayPath(path.join(home, 'nowhere', 'token'))} (set JOBDECK_TOKEN or JOBDECK_HOME) — the server answered HTTP 401: missing or invalid token`);
  });

  it('the default data folder is shown as ~/.jobdeck/token', async () => {
    const { source } = await resolveTokenSource({}, asEnv({}), () => null);
    expect(tokenRefusedHint(source)).toBe('no token found at ~/.jobdeck/token (set JOBDECK_TOKEN or JOBDECK_HOME)');
  });

  it('JOBDECK_TOKEN, --token and the token file each say that their token was refused', async () => {
    expect((await queueError({ JOBDECK_TOKEN: 'jd_wrong-but-long-enough' })).message).toMatch(/^token from \$JOBDECK_TOKEN refused — the server answered HTTP 401/);
    expect((await queueError({ JOBDECK_TOKEN: 'jd_from_env' }, { token: 'jd_from_flag' })).message).toMatch(/^token from --token refused/);
    mkdirSync(path.join(home, 'data'), { recursive: true });
    writeFileSync(path.join(home, 'data', 'token'), 'jd_from_the_file\n');
    const err = await queueError({ JOBDECK_HOME: path.join(home, 'data') });
    expect(err.message).toMatch(new RegExp(`^token from ${displayPath(path.join(home, 'data', 'token')).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} refused`));
    expect(err.exitCode).toBe(EXIT.UNAUTHORIZED);
  });
});

describe('the follow reconnect rhythm', () => {
  const drop = (over: Partial<Extract<Attempt, { kind: 'dropped' }>> = {}): Extract<Attempt, { kind: 'dropped' }> => ({ kind: 'dropped', reason: 'x', progressed: false, opened: false, refused: false, ...over });

  it('a plain drop: first retry in under 500 ms, then doubling up to 5 s', () => {
    const plan = new ReconnectPlan(DEFAULT_FOLLOW_RECONNECT_MS);
    const waits = [1, 2, 3, 4, 5, 6, 7].map((i) => plan.onDrop(drop(), i * 1000));
    expect(waits[0]).toBeLessThan(500);
    expect(waits).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
  });

  it('a good connection that drops is tried again at once', () => {
    expect(new ReconnectPlan(60_000).onDrop(drop({ progressed: true, helloSeen: true }), 0)).toBe(0);
  });

  it('the server said it is restarting (1001 / 1012 / going_away): retries stay at most 1 s until it answers', () => {
    expect(RESTART_CLOSE_CODES).toEqual([1001, 1012]);
    const plan = new ReconnectPlan(DEFAULT_FOLLOW_RECONNECT_MS);
    const waits = [plan.onDrop(drop({ progressed: true, helloSeen: true, opened: true, restarting: true }), 0)];
    for (let i = 1; i < 30; i++) waits.push(plan.onDrop(drop({ refused: true }), i * 1000)!);
    expect(waits[0]).toBe(250);
    expect(Math.max(...(waits as number[]))).toBe(RESTART_BACKOFF_MAX_MS);
    expect(plan.restarting).toBe(true);
    // The new server answered (hello) and then the connection dropped for another reason: plain backoff again.
    plan.onDrop(drop({ helloSeen: true, opened: true }), 31_000);
    expect(plan.restarting).toBe(false);
  });

  it('gives up after the limit — 5 minutes by default', () => {
    expect(DEFAULT_FOLLOW_RECONNECT_MS).toBe(300_000);
    const plan = new ReconnectPlan(DEFAULT_FOLLOW_RECONNECT_MS);
    expect(plan.onDrop(drop({ restarting: true, opened: true }), 0)).not.toBeNull();
    expect(plan.onDrop(drop(), 299_999)).not.toBeNull();
    expect(plan.onDrop(drop(), 300_000)).toBeNull();
  });

  it('--reconnect-timeout takes seconds or a unit', () => {
    expect(parseDuration('300', 'x')).toBe(300_000);
    expect(parseDuration('90s', 'x')).toBe(90_000);
    expect(parseDuration('10m', 'x')).toBe(600_000);
    expect(parseDuration('1h', 'x')).toBe(3_600_000);
    expect(parseDuration('1500ms', 'x')).toBe(1500);
    expect(() => parseDuration('0', '--reconnect-timeout')).toThrow(/--reconnect-timeout must be a duration > 0/);
    expect(() => parseDuration('soon', '--reconnect-timeout')).toThrow(CliError);
  });
});
