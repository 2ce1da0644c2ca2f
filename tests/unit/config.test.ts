/**
 * The one reader of the environment (lib/config.ts): the README's configuration table is its
 * table, no module of jobdeck names a variable it does not own, every variable's default reads
 * and every malformed value is refused naming the variable, and nothing is cached (tests set
 * variables before they start a server).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ATTEMPT_VARIABLES, ConfigError, configMarkdown, setting, VARIABLES, type VariableName } from '../../lib/config';

const ROOT = path.resolve(__dirname, '..', '..');
const NAMES = Object.keys(VARIABLES) as VariableName[];

/** Every `JOBDECK_…` word in the shipped source (lib, app, components, bin, server.ts, next.config.mjs), with a file naming it. */
function namesInSource(): Map<string, string> {
  const found = new Map<string, string>();
  const scan = (file: string) => {
    for (const m of readFileSync(file, 'utf8').matchAll(/\bJOBDECK_[A-Z0-9_]*/g)) if (!found.has(m[0])) found.set(m[0], path.relative(ROOT, file));
  };
  const walk = (dir: string) => {
    for (const e of readdirSync(dir)) {
      const p = path.join(dir, e);
      if (p.endsWith(`${path.sep}generated`)) continue;
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|tsx|mjs)$/.test(e)) scan(p);
    }
  };
  for (const d of ['lib', 'app', 'components', 'bin']) walk(path.join(ROOT, d));
  scan(path.join(ROOT, 'server.ts'));
  scan(path.join(ROOT, 'next.config.mjs'));
  return found;
}

describe('lib/config.ts', () => {
  it('is the table of the README', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const m = /<!-- config:begin -->\n([\s\S]*?)\n<!-- config:end -->/.exec(readme);
    expect(m?.[1]).toBe(configMarkdown());
    for (const name of NAMES) expect(m?.[1]).toContain(`| \`${name}\` |`);
  });

  it('owns every variable the source names (besides the ones it sets for a task, and a family named by its prefix)', () => {
    const owned = new Set<string>([...NAMES, ...ATTEMPT_VARIABLES]);
    const stray = [...namesInSource()].filter(([name]) => !owned.has(name) && !(name.endsWith('_') && [...NAMES, ...ATTEMPT_VARIABLES].some((n) => n.startsWith(name))));
    expect(stray.map(([name, file]) => `${name} (${file})`)).toEqual([]);
    // …and the reader owns nothing the source never uses.
    const used = new Set(namesInSource().keys());
    expect(NAMES.filter((n) => n.startsWith('JOBDECK_') && !used.has(n) && ![...used].some((u) => u !== 'JOBDECK_' && u.endsWith('_') && n.startsWith(u)))).toEqual([]);
  });

  it('reads every default, and refuses a malformed value naming the variable', () => {
    for (const name of NAMES) {
      expect(() => setting(name, {}), name).not.toThrow();
      const v = VARIABLES[name];
      if (!/^(integer|number|0 or 1|size|duration|`0` or integer)/.test(v.value)) continue;
      expect(() => setting(name, { [name]: 'not-a-value' }), name).toThrow(ConfigError);
      expect(() => setting(name, { [name]: 'not-a-value' }), name).toThrow(new RegExp(`^${name}: expected .*, got "not-a-value"$`));
    }
  });

  it('keeps the bounds it documents', () => {
    expect(setting('JOBDECK_RECONCILE_MS', { JOBDECK_RECONCILE_MS: ' 250 ' })).toBe(250);
    expect(() => setting('JOBDECK_RECONCILE_MS', { JOBDECK_RECONCILE_MS: '9' })).toThrow('JOBDECK_RECONCILE_MS: expected an integer ≥ 10, got "9"');
    expect(() => setting('JOBDECK_LEASE_MS', { JOBDECK_LEASE_MS: '600001' })).toThrow('JOBDECK_LEASE_MS: expected an integer from 300 to 600000, got "600001"');
    expect(setting('JOBDECK_CAPACITY_CHECK', { JOBDECK_CAPACITY_CHECK: 'false' })).toBe(false);
    expect(() => setting('JOBDECK_PGLITE_WORKER', { JOBDECK_PGLITE_WORKER: 'true' })).toThrow('JOBDECK_PGLITE_WORKER: expected 0 or 1, got "true"');
    expect(setting('JOBDECK_SESSION_TTL_HOURS', { JOBDECK_SESSION_TTL_HOURS: '1.5' })).toBe(1.5);
    expect(setting('JOBDECK_USAGE_INTERVAL_MS', { JOBDECK_USAGE_INTERVAL_MS: '0' })).toBe(0);
    expect(() => setting('JOBDECK_USAGE_INTERVAL_MS', { JOBDECK_USAGE_INTERVAL_MS: '50' })).toThrow(/^JOBDECK_USAGE_INTERVAL_MS: expected 0 \(off\)/);
    expect(setting('JOBDECK_V8_FLAGS', {})).toBeUndefined();
    expect(setting('JOBDECK_V8_FLAGS', { JOBDECK_V8_FLAGS: '' })).toBe('');
  });

  it('reads the environment at each call (nothing cached)', () => {
    const saved = process.env.JOBDECK_RECONCILE_MS;
    try {
      process.env.JOBDECK_RECONCILE_MS = '300';
      expect(setting('JOBDECK_RECONCILE_MS')).toBe(300);
      process.env.JOBDECK_RECONCILE_MS = '400';
      expect(setting('JOBDECK_RECONCILE_MS')).toBe(400);
      delete process.env.JOBDECK_RECONCILE_MS;
      expect(setting('JOBDECK_RECONCILE_MS')).toBe(1000);
    } finally {
      if (saved === undefined) delete process.env.JOBDECK_RECONCILE_MS;
      else process.env.JOBDECK_RECONCILE_MS = saved;
    }
  });
});
