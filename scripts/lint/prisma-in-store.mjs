// SQL only in the store (docs/design.md "The store's files", "Wiring and dependencies"): no file
// of app/, components/, lib/ (but lib/store/ and lib/db/), bin/ or server.ts uses a Prisma model
// delegate (`store.prisma.job.findMany(…)`, `db.attempt.count(…)`) or a raw statement or
// transaction (`$queryRaw`, `$executeRaw…`, `$transaction`). dependency-cruiser sees imports
// only, and a Store hands out its client without one, so this reads the code: comments are left
// out, strings are not. A hit prints `file:line:col` and what was used; exit 1.
// Usage: node scripts/lint/prisma-in-store.mjs [root]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = process.argv[2] ?? path.dirname(path.dirname(path.dirname(fileURLToPath(import.meta.url))));
const SOURCES = ['app', 'components', 'lib', 'bin', 'server.ts'];
/** Where statements belong: the store (statements) and the database module (the connection). */
const ALLOWED = /^lib\/(store|db|generated)\//;
const EXT = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;

/** The model delegates' names (`model AttemptUsage` → `attemptUsage`), from the schema. */
function delegates() {
  const schema = readFileSync(path.join(root, 'prisma', 'schema.prisma'), 'utf8');
  return [...schema.matchAll(/^model\s+(\w+)\s*\{/gm)].map((m) => m[1][0].toLowerCase() + m[1].slice(1));
}

const METHODS = [
  'findUnique', 'findUniqueOrThrow', 'findFirst', 'findFirstOrThrow', 'findMany', 'create', 'createMany', 'createManyAndReturn',
  'update', 'updateMany', 'updateManyAndReturn', 'upsert', 'delete', 'deleteMany', 'count', 'aggregate', 'groupBy',
];
const models = delegates();
const PATTERNS = [
  // `<anything>.job.findMany(` — whatever the client is called.
  new RegExp(`\\.\\s*(${models.join('|')})\\s*\\.\\s*(${METHODS.join('|')})\\s*\\(`, 'g'),
  // `prisma.job` handed on (`const jobs = store.prisma.job`).
  new RegExp(`\\bprisma\\s*\\.\\s*(${models.join('|')})\\b`, 'g'),
  // Raw statements and transactions.
  /\$(queryRaw|queryRawUnsafe|queryRawTyped|executeRaw|executeRawUnsafe|transaction)\b/g,
];

/** `src` with its comments blanked (newlines kept, so positions stay); strings and templates untouched. */
function withoutComments(src) {
  let out = '';
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    const d = src[i + 1];
    if (c === '/' && d === '/') {
      while (i < src.length && src[i] !== '\n') (out += ' '), i++;
    } else if (c === '/' && d === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? src.length : end + 2;
      out += src.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (c === '"' || c === "'" || c === '`') {
      out += c;
      i++;
      while (i < src.length && src[i] !== c) {
        if (src[i] === '\\') (out += src[i]), i++;
        if (i < src.length) (out += src[i]), i++;
      }
      if (i < src.length) (out += src[i]), i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Every source file under `rel` (a file or a folder, relative to root), relative paths. */
function files(rel) {
  const abs = path.join(root, rel);
  let st;
  try {
    st = statSync(abs);
  } catch {
    return [];
  }
  if (st.isFile()) return EXT.test(rel) ? [rel] : [];
  return readdirSync(abs, { withFileTypes: true })
    .filter((e) => e.name !== 'node_modules' && !e.name.startsWith('.'))
    .flatMap((e) => files(`${rel}/${e.name}`));
}

/** `file:line` → the first column and what was used there. */
const hits = new Map();
for (const file of SOURCES.flatMap(files)) {
  if (ALLOWED.test(file)) continue;
  const code = withoutComments(readFileSync(path.join(root, file), 'utf8'));
  for (const re of PATTERNS) {
    for (const m of code.matchAll(re)) {
      const before = code.slice(0, m.index);
      const at = `${file}:${before.split('\n').length}`;
      // `prisma.job` is news only where no `.job.<method>(` was seen on the line.
      if (re === PATTERNS[1] && hits.has(at)) continue;
      const col = m.index - before.lastIndexOf('\n');
      const used = m[0].replace(/\s+/g, '').replace(/^\.|\($/g, '');
      const h = hits.get(at) ?? { col, used: [] };
      h.col = Math.min(h.col, col);
      if (!h.used.includes(used)) h.used.push(used);
      hits.set(at, h);
    }
  }
}
const lines = [...hits].map(([at, h]) => `${at}:${h.col}  uses the database outside lib/store: ${h.used.join(', ')} — move the statement into a lib/store statement file`);
for (const l of lines.sort()) console.log(l);
if (lines.length) {
  console.log(`\n${lines.length} use(s) of the database outside lib/store and lib/db (scripts/lint/prisma-in-store.mjs).`);
  process.exitCode = 1;
}
