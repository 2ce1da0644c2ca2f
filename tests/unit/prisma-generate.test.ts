/**
 * scripts/prisma-generate.mjs rewrites the generated client's query-compiler loader: the
 * WebAssembly's base64 is read from its file as text, not imported (an imported module's text
 * stays in the heap for good; docs/design.md "Memory"). The database suites exercise the loader;
 * this checks the rewrite is in the generated file the server runs.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const CLASS_FILE = path.resolve(__dirname, '..', '..', 'lib', 'generated', 'prisma', 'internal', 'class.ts');

describe('prisma-generate: the query compiler loader', () => {
  it('reads the base64 file as text instead of importing it', () => {
    const text = readFileSync(CLASS_FILE, 'utf8');
    expect(text).not.toMatch(/await import\("@prisma\/client\/runtime\/[^"]+\.wasm-base64\.mjs"\)/);
    expect(text).toMatch(/readFile\(createRequire\(import\.meta\.url\)\.resolve\("@prisma\/client\/runtime\/query_compiler_[a-z]+_bg\.postgresql\.wasm-base64\.mjs"\), 'utf8'\)/);
  });
});
