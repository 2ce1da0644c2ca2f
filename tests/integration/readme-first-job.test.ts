/**
 * The README's "A first job" works as written: its shell block is read from README.md and each
 * command is run as a user would type it — `npx jobdeck …` in the project folder through bash —
 * against a fresh real server started without JOBDECK_TOKEN, so the CLI finds the server's token
 * file by itself (`$JOBDECK_HOME/token`) and the default address (HOST/PORT). Every command must
 * exit 0 and do what its comment says.
 *
 * Needs a built app (the vitest global setup builds one when missing).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startServerProcess, type ServerProcess } from '../helpers/server';
import { waitStatus } from './cli-run';

/** Drops a trailing `# comment` (a `#` after a blank, outside quotes) from a shell line. */
export function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === '#' && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i).trimEnd();
  }
  return line.trimEnd();
}

/** The commands of the README section `heading`'s first ```sh block. */
export function readmeCommands(heading: string): string[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const at = readme.indexOf(`\n## ${heading}\n`);
  if (at < 0) throw new Error(`README.md has no "## ${heading}" section`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))?.[1];
  if (!block) throw new Error(`no sh block under "## ${heading}"`);
  return block.split('\n').map(stripComment).filter((l) => l.trim() !== '');
}

function sh(line: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn('bash', ['-c', line], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const t = setTimeout(() => p.kill('SIGKILL'), 240_000);
    p.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, out });
    });
  });
}

describe('README "A first job"', () => {
  let server: ServerProcess;
  let port: string;

  beforeAll(async () => {
    // No JOBDECK_TOKEN: the server makes one and writes it to $JOBDECK_HOME/token, as on a first
    // start — and its database too, from an empty data folder (no template).
    server = await startServerProcess({ env: { JOBDECK_TOKEN: '' }, pgliteTemplate: false });
    port = new URL(server.url).port;
  });

  afterAll(async () => {
    await server?.dispose();
  });

  it('the commands parse from the README: five jobdeck commands', () => {
    const cmds = readmeCommands('A first job');
    expect(cmds).toHaveLength(5);
    for (const c of cmds) expect(c).toMatch(/^npx jobdeck /);
    expect(stripComment(`npx jobdeck launch --cmd 'echo "#1"; sleep 1'   # a comment`)).toBe(`npx jobdeck launch --cmd 'echo "#1"; sleep 1'`);
  });

  it('run as written, each exits 0 and does what it says', async () => {
    // The CLI's defaults: http://$HOST:$PORT and $JOBDECK_HOME/token; nothing else is set.
    const env = { JOBDECK_HOME: server.home, HOST: '127.0.0.1', PORT: port, JOBDECK_URL: '', JOBDECK_TOKEN: '', NO_COLOR: '1', FORCE_COLOR: '' };
    const token = readFileSync(path.join(server.home, 'token'), 'utf8').trim();
    // The token the server wrote, for the checks made through the API.
    const withFileToken: ServerProcess = { ...server, token, api: (p, init = {}) => fetch(new URL(p, server.url), { ...init, headers: { authorization: `Bearer ${token}` } }) };
    const outs: string[] = [];
    for (const line of readmeCommands('A first job')) {
      const r = await sh(line, env);
      outs.push(r.out);
      expect(r.code, `${line}\n${r.out}`).toBe(0);
    }
    const [launch, logs, detached, queue, cancel] = outs;
    expect(launch).toContain('hello from jobdeck');
    expect(launch).toContain('Job 1 finished (status: SUCCEEDED)');
    expect(logs).toContain('hello from jobdeck');
    expect(detached).toContain('Job submitted, ID: 2');
    expect(queue).toMatch(/\b2\s+-\s+first\b/);
    expect(cancel).toMatch(/2/);
    expect(await waitStatus(withFileToken, 2, (s) => s === 'CANCELLED')).toBe('CANCELLED');
  });
});
