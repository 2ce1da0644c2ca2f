/**
 * `jobdeck --help` reads well at 80 columns (lib/cli/help.ts): every command and subcommand has
 * a summary and a description written as paragraphs, no line of any help is wider than the
 * terminal (80 when it is no terminal), no column name or phrase is broken by a hard line break,
 * and the exit-code table is in the top-level help only.
 */
import { describe, expect, it } from 'vitest';
import type { CliIO } from '../../lib/cli/context';
import { EXIT_CODE_TABLE } from '../../lib/cli/exit-codes';
import { allCommands } from '../../lib/cli/help';
import { buildProgram, main } from '../../lib/cli/main';

/** An IO whose stdout is a terminal of `columns` (undefined: not a terminal). */
function io(columns?: number): { io: CliIO; out: () => string } {
  let out = '';
  const sink = { write: (c: string | Uint8Array) => ((out += typeof c === 'string' ? c : Buffer.from(c).toString()), true), once: () => undefined, isTTY: columns !== undefined, columns };
  return {
    io: { stdout: sink, stderr: sink, stdin: process.stdin, env: {} as NodeJS.ProcessEnv, cwd: process.cwd(), now: () => new Date('2026-01-01T00:00:00Z'), onInterrupt: () => () => undefined },
    out: () => out,
  };
}

async function help(argv: string[], columns?: number): Promise<string> {
  const h = io(columns);
  expect(await main([...argv, '--help'], h.io)).toBe(0);
  return h.out();
}

const program = buildProgram(io().io, () => undefined);
const paths = allCommands(program).map((c) => {
  const names: string[] = [];
  for (let x: typeof c | null = c; x && x !== program; x = x.parent) names.unshift(x.name());
  return names;
});

describe('jobdeck help', () => {
  it('every command and subcommand has a summary and a description, in paragraphs', () => {
    for (const c of allCommands(program)) {
      expect(c.summary(), c.name()).not.toBe('');
      expect(c.description(), c.name()).not.toBe('');
      // Line breaks only between paragraphs: the wrap is commander's, at the terminal's width.
      expect(c.description().replace(/\n\n/g, ''), c.name()).not.toContain('\n');
    }
  });

  it.each([[undefined], [80], [120]])('no line is wider than the terminal (%s columns; none: 80)', async (columns) => {
    for (const argv of [[], ...paths]) {
      const text = await help(argv, columns);
      for (const line of text.split('\n')) expect([...line].length, `${argv.join(' ')}: ${line}`).toBeLessThanOrEqual(columns ?? 80);
    }
  });

  it('the exit codes once: the whole table in the top-level help, a pointer in each command', async () => {
    const top = (await help([])).replace(/\s+/g, ' ');
    for (const r of EXIT_CODE_TABLE) expect(top).toContain(`${r.code} ${r.meaning}`);
    for (const argv of paths) {
      const text = await help(argv);
      expect(text, argv.join(' ')).toContain('`jobdeck --help` lists them all');
      expect(text, argv.join(' ')).not.toContain(EXIT_CODE_TABLE[10].meaning.slice(0, 40));
    }
  });

  it('multi-word column names stay whole: queue --help lists them one per row', async () => {
    const text = await help(['queue']);
    expect(text).toMatch(/^ {2}TOT\. DURATION +from its submission/m);
    expect(text).toMatch(/^ {2}JOB DURATION +from its start/m);
    expect(text).not.toMatch(/JOB\n/);
  });
});
