import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error a plain .mjs script without types
import { fingerprint, staleReason } from '../../scripts/build-if-stale.mjs';

type Fp = Record<string, string>;
const stale = staleReason as (base: string, dist: string, now: Fp) => string | null;
const fp = fingerprint as (base: string) => Fp;

/** `npm start` builds only when the build is missing or its sources changed (scripts/build-if-stale.mjs). */
describe('build-if-stale', () => {
  let dir: string;
  const write = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  };
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-build-'));
    write('app/page.tsx', 'export default 1;\n');
    write('lib/ui/x.ts', 'export const x = 1;\n');
    write('next.config.mjs', 'export default {};\n');
    write('tests/ignored.test.ts', 'not a source\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('no build yet → build', () => {
    expect(stale(dir, '.next', fp(dir))).toBe('no build in .next/ yet');
  });

  it('with a record: same contents are up to date even when touched; a changed or removed file is named', () => {
    write('.next/BUILD_ID', 'b1');
    write('.next/jobdeck-sources.json', JSON.stringify({ files: fp(dir) }));
    const later = Date.now() / 1000 + 60;
    utimesSync(path.join(dir, 'app/page.tsx'), later, later);
    expect(stale(dir, '.next', fp(dir))).toBeNull();
    expect(Object.keys(fp(dir))).not.toContain('tests/ignored.test.ts');

    write('lib/ui/x.ts', 'export const x = 2;\n');
    expect(stale(dir, '.next', fp(dir))).toBe('1 source file changed since the last build (lib/ui/x.ts)');
    rmSync(path.join(dir, 'app/page.tsx'));
    expect(stale(dir, '.next', fp(dir))).toMatch(/1 removed \(app\/page\.tsx\)/);
  });

  it('built by `next build` directly (no record): judged by modification times', () => {
    write('.next/BUILD_ID', 'b1');
    const before = Date.now() / 1000 - 60;
    for (const f of Object.keys(fp(dir))) utimesSync(path.join(dir, f), before, before);
    expect(stale(dir, '.next', fp(dir))).toBeNull();
    const later = Date.now() / 1000 + 60;
    utimesSync(path.join(dir, 'next.config.mjs'), later, later);
    expect(stale(dir, '.next', fp(dir))).toBe('1 source file is newer than the build (next.config.mjs)');
  });
});
