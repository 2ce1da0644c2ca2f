/**
 * The bundles' freshness rule (bin/bundle.mjs): a launcher runs a bundle only while no file it
 * was made of is newer; a newer input, a missing input, a missing bundle or a broken input list
 * send it to the sources.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript without types (the launchers' own helper)
import { bundleFresh } from '../../bin/bundle.mjs';

const fresh = bundleFresh as (root: string, dir: string, file: string) => boolean;

describe('bundleFresh', () => {
  let root: string;
  let dir: string;
  const at = (f: string, s: number) => utimesSync(path.join(root, f), s, s);
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'jobdeck-bundle-'));
    dir = path.join(root, '.bundle');
    mkdirSync(path.join(root, 'lib'), { recursive: true });
    mkdirSync(dir);
    for (const f of ['lib/a.ts', 'lib/b.ts', 'package-lock.json']) {
      writeFileSync(path.join(root, f), f);
      at(f, 1_000);
    }
    writeFileSync(path.join(dir, 'inputs.json'), JSON.stringify(['lib/a.ts', 'lib/b.ts', 'lib', 'package-lock.json']));
    writeFileSync(path.join(dir, 'out.mjs'), '');
    at('lib', 1_000);
    at('.bundle/out.mjs', 2_000);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('is fresh when every input is as old as the bundle or older', () => {
    expect(fresh(root, dir, 'out.mjs')).toBe(true);
    at('lib/a.ts', 2_000);
    expect(fresh(root, dir, 'out.mjs')).toBe(true);
  });

  it('is stale when an input is newer, gone, or a listed folder changed', () => {
    at('lib/b.ts', 2_001);
    expect(fresh(root, dir, 'out.mjs')).toBe(false);
    at('lib/b.ts', 1_000);
    rmSync(path.join(root, 'lib/a.ts'));
    expect(fresh(root, dir, 'out.mjs')).toBe(false);
    writeFileSync(path.join(root, 'lib/a.ts'), 'a');
    at('lib/a.ts', 1_000);
    at('lib', 3_000); // a file added to or removed from a listed folder
    expect(fresh(root, dir, 'out.mjs')).toBe(false);
  });

  it('is stale without a bundle or with an input list that is missing, empty or not a list', () => {
    rmSync(path.join(dir, 'out.mjs'));
    expect(fresh(root, dir, 'out.mjs')).toBe(false);
    writeFileSync(path.join(dir, 'out.mjs'), '');
    at('.bundle/out.mjs', 2_000);
    for (const text of ['[]', '{"lib/a.ts": 1}', 'not json']) {
      writeFileSync(path.join(dir, 'inputs.json'), text);
      expect(fresh(root, dir, 'out.mjs'), text).toBe(false);
    }
    rmSync(path.join(dir, 'inputs.json'));
    expect(fresh(root, dir, 'out.mjs')).toBe(false);
  });
});
