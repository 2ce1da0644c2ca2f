import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyV8Flags, checkV8Flags, collectStartupGarbage, DEFAULT_V8_FLAGS, missingNodeFlags, parseV8Flags, SERVER_NODE_FLAGS } from '../../lib/server/v8-flags';

describe('JOBDECK_V8_FLAGS', () => {
  it('splits --flag and --flag=value items on any whitespace', () => {
    expect(parseV8Flags('  --heap-growing-percent=50\t--no-memory-reducer \n')).toEqual(['--heap-growing-percent=50', '--no-memory-reducer']);
    expect(parseV8Flags('')).toEqual([]);
  });

  it('refuses an item that is not a flag, naming the variable and the item', () => {
    expect(() => parseV8Flags('--heap-growing-percent=50 heap-growing-percent=30')).toThrow('JOBDECK_V8_FLAGS: expected --flag or --flag=value items separated by spaces, got "heap-growing-percent=30"');
    expect(() => parseV8Flags('--=1')).toThrow(/got "--=1"/);
  });

  it('refuses a flag node does not know, or a bad value, naming it (V8 alone would only print a warning)', () => {
    expect(() => applyV8Flags({ JOBDECK_V8_FLAGS: '--heap-growing-percent=50 --no-such-flag' })).toThrow(/JOBDECK_V8_FLAGS: node refuses "--no-such-flag" \(.*bad option/);
    expect(() => applyV8Flags({ JOBDECK_V8_FLAGS: '--heap-growing-percent=abc' })).toThrow(/node refuses "--heap-growing-percent=abc"/);
    expect(() => checkV8Flags(parseV8Flags(DEFAULT_V8_FLAGS))).not.toThrow();
  });

  it('applies the default when unset, nothing when set empty, and nothing at all when one item is bad', () => {
    expect(applyV8Flags({})).toEqual(parseV8Flags(DEFAULT_V8_FLAGS));
    expect(applyV8Flags({ JOBDECK_V8_FLAGS: '' })).toEqual([]);
    expect(() => applyV8Flags({ JOBDECK_V8_FLAGS: '--heap-growing-percent=50 oops' })).toThrow(/"oops"/);
  });
});

describe('SERVER_NODE_FLAGS (read by V8 only at its start)', () => {
  it('npm start and npm run dev pass every one to node', () => {
    const pkg = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    for (const script of ['start', 'dev']) {
      const nodeArgs = pkg.scripts[script].split(/\s+/);
      for (const f of SERVER_NODE_FLAGS) expect(nodeArgs, `package.json scripts.${script}`).toContain(f);
    }
  });

  it('names the ones a process lacks, from its arguments or NODE_OPTIONS', () => {
    expect(missingNodeFlags([], '')).toEqual([...SERVER_NODE_FLAGS]);
    expect(missingNodeFlags([...SERVER_NODE_FLAGS, '--import', 'tsx'], '')).toEqual([]);
    expect(missingNodeFlags([], `--trace-warnings ${SERVER_NODE_FLAGS.join(' ')}`)).toEqual([]);
    // The operator's own value counts as given.
    expect(missingNodeFlags(['--max-semi-space-size=16'], '')).toEqual([]);
  });

  it('caps the young generation: after heavy allocation it stays at 2 × 4 MB (16 MB semi-spaces grow to 32)', () => {
    const script =
      "let k=[];for(let i=0;i<2e6;i++){k.push({a:i,b:'x'+i});if(k.length>20000)k=[]}" +
      "console.log(require('v8').getHeapSpaceStatistics().find(s=>s.space_name==='new_space').space_size)";
    const size = (flags: readonly string[]) => {
      const r = spawnSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
      expect(r.status, r.stderr).toBe(0);
      return Number(r.stdout.trim()) / 2 ** 20;
    };
    expect(size(SERVER_NODE_FLAGS)).toBeLessThanOrEqual(8);
    expect(size([])).toBeGreaterThan(8);
  });
});

describe('collectStartupGarbage', () => {
  it('runs a full collection: an unreachable old object is gone after it', async () => {
    // Promoted to the old generation first, where only a full collection frees it.
    let big: { data: string[] } | null = { data: Array.from({ length: 2000 }, (_, i) => `garbage ${i}`) };
    const ref = new WeakRef(big);
    for (let i = 0; i < 3; i++) Array.from({ length: 200_000 }, (_, j) => ({ j }));
    big = null;
    // A WeakRef holds its target until the end of the job that made or read it.
    await new Promise((r) => setTimeout(r, 0));
    expect(typeof collectStartupGarbage()).toBe('number');
    expect(ref.deref()).toBeUndefined();
  });
});
