// Generates the Prisma client offline.
// The Prisma CLI tries to download its native schema engine before `generate`, which this
// network cannot reach; the generator itself never runs that engine, so pointing
// PRISMA_SCHEMA_ENGINE_BINARY at any existing file lets `generate` work offline.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const env = { ...process.env };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY) env.PRISMA_SCHEMA_ENGINE_BINARY = existsSync('/bin/true') ? '/bin/true' : '/usr/bin/true';
env.PRISMA_HIDE_UPDATE_MESSAGE = '1';
env.CHECKPOINT_DISABLE = '1';
const cli = path.join(root, 'node_modules', 'prisma', 'build', 'index.js');
const r = spawnSync(process.execPath, [cli, 'generate', '--schema', path.join(root, 'prisma', 'schema.prisma')], { cwd: root, env, stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
readWasmFromFile(path.join(root, 'lib', 'generated', 'prisma', 'internal', 'class.ts'));

// The generated client gets its query compiler (~3.4 MB of WebAssembly) by importing a module
// whose one export is that module in base64 (4.6 MB). An ES module is never unloaded: its source
// text and the string constant stay in the JavaScript heap for the life of the process, ~9 MB of
// an idle server that nothing reads again (docs/design.md "Memory"). Here the generated loader
// reads the same file as text instead and decodes it: the text is garbage once compiled.
function readWasmFromFile(classFile) {
  const text = readFileSync(classFile, 'utf8');
  const re = /const \{ wasm \} = await import\(("@prisma\/client\/runtime\/[^"]+\.wasm-base64\.mjs")\)\n(\s*)return await decodeBase64AsWasm\(wasm\)/;
  const m = re.exec(text);
  if (!m) {
    // A Prisma upgrade changed the generated loader: say so rather than keep ~9 MB silently.
    console.error(`prisma-generate: the query compiler's loader in ${path.relative(root, classFile)} is not the expected one; update readWasmFromFile() in scripts/prisma-generate.mjs`);
    process.exit(1);
  }
  const [, spec, indent] = m;
  const body = [
    `// jobdeck (scripts/prisma-generate.mjs): read as text, not imported — an imported module's`,
    `// 4.6 MB of base64 would stay in the heap for good.`,
    `const { readFile } = await import('node:fs/promises')`,
    `const { createRequire } = await import('node:module')`,
    `const source = await readFile(createRequire(import.meta.url).resolve(${spec}), 'utf8')`,
    `return await decodeBase64AsWasm(source.slice(source.indexOf('"') + 1, source.lastIndexOf('"')))`,
  ].join(`\n${indent}`);
  writeFileSync(classFile, text.slice(0, m.index) + body + text.slice(m.index + m[0].length));
}
