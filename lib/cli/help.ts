/**
 * How `jobdeck --help` reads at any terminal width (docs/cli.md): one width for commander's own
 * text and for jobdeck's additions after it — examples, environment, the exit-code table (in
 * the top-level help only; a command's help points there) — every line wrapped at a word to
 * that width, never mid-phrase. Descriptions are written as paragraphs (blank lines between
 * them, no line breaks inside) so that commander wraps them the same way.
 */
import { Help } from 'commander';
import type { Command } from 'commander';
import { CLI_ENV_HELP } from './config';
import { EXIT_CODE_TABLE } from './exit-codes';

/** The width help text is wrapped to: the terminal's (60–120), else 80. */
export function helpWidthOf(out: { isTTY?: boolean; columns?: number }): number {
  const c = out.isTTY ? out.columns : undefined;
  return typeof c === 'number' && c > 0 ? Math.max(60, Math.min(120, c)) : 80;
}

/** A commander Help formatter at `width` (its item and word-wrap rules). */
function helper(width: number): Help {
  const h = new Help();
  h.helpWidth = width;
  return h;
}

/** Rows `term  description` with the descriptions aligned and wrapped under themselves. */
export function formatRows(rows: ReadonlyArray<readonly [string, string]>, width: number): string[] {
  const h = helper(width);
  const termWidth = Math.max(...rows.map(([t]) => t.length));
  return rows.map(([t, d]) => h.formatItem(t, termWidth, d, h));
}

/** Text wrapped at `width`, every line indented by `indent` spaces. */
export function wrapText(text: string, width: number, indent = 0): string {
  const pad = ' '.repeat(indent);
  return helper(width)
    .boxWrap(text, width - indent)
    .split('\n')
    .map((l) => (l ? pad + l : l))
    .join('\n');
}

/** Commands typed at a prompt and what they do: the command on its line, what it does under it. */
const EXAMPLES: ReadonlyArray<readonly [string, string]> = [
  ['jobdeck launch examples/seed-retry-pipeline.yaml', 'submit and follow; the exit code says how the job ended'],
  ['jobdeck launch -d --cmd "python train.py" -n train', 'submit only; prints "Job submitted, ID: N"'],
  ['jobdeck queue', 'jobs not finished, and those finished in the last 24 h'],
  ['jobdeck logs 7 1 --attempt 2', 'task 1, attempt 2 of job 7'],
];

/** The exit-code table as help text (ONE table: lib/cli/exit-codes.ts), wrapped at `width`. */
export function exitCodesText(width: number): string {
  return ['Exit codes:', ...formatRows(EXIT_CODE_TABLE.map((r) => [String(r.code).padStart(2), r.meaning] as const), width)].join('\n');
}

/** The text after the top-level help: examples, output, environment, exit codes — at `width`. */
export function helpFooter(width = 80): string {
  return [
    '',
    'Examples:',
    ...EXAMPLES.flatMap(([cmd, what]) => [`  ${cmd}`, wrapText(what, width, 6)]),
    '',
    'Output:',
    wrapText(
      'log bytes go to stdout — exactly as the job wrote them when redirected; on a terminal without --raw, escape sequences other than colours are removed. Progress markers and errors go to stderr.',
      width,
      2,
    ),
    '',
    'Environment:',
    ...formatRows(CLI_ENV_HELP, width),
    '',
    exitCodesText(width),
  ].join('\n');
}

/** What a command's help says of the exit codes: where the table is. */
export const EXIT_CODES_POINTER = 'Exit codes: 0 when it worked; `jobdeck --help` lists them all.';

/** Every command under `program` (itself excluded), depth first. */
export function allCommands(program: Command): Command[] {
  return program.commands.flatMap((c) => [c, ...allCommands(c)]);
}

/**
 * A help section after a command's options — `Title:` then aligned rows — for
 * `addHelpText('after', …)`, wrapped at the width the command's help is written at.
 */
export function helpSection(title: string, rows: ReadonlyArray<readonly [string, string]>): (ctx: { error: boolean; command: Command }) => string {
  return ({ error, command }) => {
    const out = command.configureOutput();
    const width = (error ? out.getErrHelpWidth?.() : out.getOutHelpWidth?.()) ?? 80;
    return ['', `${title}:`, ...formatRows(rows, width)].join('\n');
  };
}
