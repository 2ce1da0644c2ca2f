import { describe, expect, it } from 'vitest';
import { EXIT, EXIT_CODE_TABLE } from '../../lib/cli/exit-codes';
import type { CliIO } from '../../lib/cli/context';
import { main } from '../../lib/cli/main';

/** Runs main() in-process with captured streams (no server: only what fails before a request). */
async function run(argv: string[], env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const sink = (add: (s: string) => void) => ({
    write: (c: string | Uint8Array) => {
      add(typeof c === 'string' ? c : Buffer.from(c).toString());
      return true;
    },
    once: () => undefined,
    isTTY: false,
  });
  const io: CliIO = {
    stdout: sink((s) => (out += s)),
    stderr: sink((s) => (err += s)),
    stdin: process.stdin,
    env: env as unknown as NodeJS.ProcessEnv,
    cwd: process.cwd(),
    now: () => new Date('2026-01-01T00:00:00Z'),
    onInterrupt: () => () => undefined,
  };
  const code = await main(argv, io);
  return { code, out, err };
}

describe('jobdeck main()', () => {
  it('--help documents every command, the environment and every exit code', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(EXIT.OK);
    for (const c of ['launch', 'queue', 'logs', 'cancel', 'delete', 'status', 'server']) expect(r.out).toMatch(new RegExp(`\\n  ${c} `));
    for (const v of ['JOBDECK_URL', 'JOBDECK_TOKEN', 'JOBDECK_HOME', 'JOBDECK_RECONNECT_TIMEOUT_MS']) expect(r.out).toContain(v);
    // Wrapped at the width: compare the words.
    const words = r.out.replace(/\s+/g, ' ');
    for (const row of EXIT_CODE_TABLE) expect(words).toContain(row.meaning);
  });

  it('each command help points to the exit codes', async () => {
    const r = await run(['logs', '--help']);
    expect(r.code).toBe(EXIT.OK);
    expect(r.out).toContain('--no-follow');
    expect(r.out).toContain('--attempt <k>');
    expect(r.out).toContain('Exit codes: 0 when it worked; `jobdeck --help` lists them all.');
  });

  it('usage errors exit 2 with a clear message', async () => {
    expect((await run([])).code).toBe(EXIT.USAGE);
    const unknown = await run(['frobnicate']);
    expect(unknown.code).toBe(EXIT.USAGE);
    expect(unknown.err).toContain("unknown command 'frobnicate'");
    const both = await run(['launch', 'a.yaml', '--cmd', 'true']);
    expect(both.code).toBe(EXIT.USAGE);
    expect(both.err).toBe('error: give a job file or --cmd, not both\n');
    const badId = await run(['logs', '7x']);
    expect(badId.err).toBe('error: job id must be a positive integer, got "7x"\n');
    expect(badId.code).toBe(EXIT.USAGE);
    const badUrl = await run(['queue', '--url', 'ftp://x']);
    expect(badUrl.code).toBe(EXIT.USAGE);
    expect(badUrl.err).toContain('--url: expected an http:// or https:// URL');
    const allAndIds = await run(['cancel', '-a', '3']);
    expect(allAndIds.code).toBe(EXIT.USAGE);
  });

  it('--version prints the package version', async () => {
    const r = await run(['--version']);
    expect(r.code).toBe(EXIT.OK);
    expect(r.out.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
