/**
 * docs/spec.md stays true: every ```yaml block in it parses, every ```yaml error block is refused
 * with exactly the text of the ```text block right after it (read as job.yaml), and every ```json
 * block is a valid spec in the JSON form.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkJobSpec, formatSpecIssue, SpecError, parseJobSpec, parseJobSpecObject } from '../../lib/jobs/spec';

const DOC = path.resolve(__dirname, '..', '..', 'docs', 'spec.md');

interface Block {
  /** The fence's info string, e.g. "yaml", "yaml error", "text". */
  info: string;
  /** 1-based line of the opening fence. */
  line: number;
  body: string;
}

/** The fenced blocks of a Markdown text (fences at the start of a line, ``` only). */
function fencedBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]);
    if (i >= lines.length) throw new Error(`docs/spec.md:${start + 1}: unclosed code block`);
    blocks.push({ info: open[1].trim(), line: start + 1, body: body.map((l) => `${l}\n`).join('') });
  }
  return blocks;
}

/** The message a YAML text is refused with, or null when it parses. */
function refusal(yaml: string): string | null {
  try {
    parseJobSpec(yaml);
    return null;
  } catch (err) {
    if (err instanceof SpecError) return err.message;
    throw err;
  }
}

const blocks = fencedBlocks(readFileSync(DOC, 'utf8'));
const valid = blocks.filter((b) => b.info === 'yaml');
const refused = blocks.map((b, i) => ({ b, next: blocks[i + 1] })).filter(({ b }) => b.info === 'yaml error');
const json = blocks.filter((b) => b.info === 'json');
// A valid example followed by a text block of `warning: …` lines shows its warnings.
const warned = blocks.map((b, i) => ({ b, next: blocks[i + 1] })).filter(({ b, next }) => b.info === 'yaml' && next?.info === 'text' && next.body.startsWith('warning: '));

describe('docs/spec.md', () => {
  it('has examples of both kinds, and only known kinds of yaml blocks', () => {
    expect(valid.length).toBeGreaterThanOrEqual(10);
    expect(refused.length).toBeGreaterThanOrEqual(20);
    for (const b of blocks) if (b.info.startsWith('yaml')) expect(['yaml', 'yaml error'], `line ${b.line}`).toContain(b.info);
  });

  it.each(valid.map((b) => [b.line, b]))('the example at line %i parses', (_line, b) => {
    expect(refusal(b.body)).toBeNull();
  });

  it.each(refused.map(({ b, next }) => [b.line, b, next]))('the example at line %i is refused with the error shown after it', (line, b, next) => {
    expect(next?.info, `the block after line ${line} must be a text block with the error`).toBe('text');
    expect(refusal(b.body)).toBe(next.body.replace(/\n$/, ''));
  });

  it('shows the warnings of at least one example', () => expect(warned.length).toBeGreaterThanOrEqual(1));

  it.each(warned.map(({ b, next }) => [b.line, b, next]))('the example at line %i has exactly the warnings shown after it', (_line, b, next) => {
    const { warnings } = checkJobSpec(b.body);
    expect(warnings.map((w) => `warning: ${formatSpecIssue(w)}`).join('\n')).toBe(next.body.replace(/\n$/, ''));
  });

  it.each(json.map((b) => [b.line, b]))('the JSON example at line %i is a valid spec', (_line, b) => {
    expect(() => parseJobSpecObject(JSON.parse(b.body))).not.toThrow();
  });
});
