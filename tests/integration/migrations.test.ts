import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, MigrationError, readMigrations, type RawSql } from '../../lib/db/migrate';
import { openDatabase } from '../../lib/db/client';
import { pgliteExtensions } from '../../lib/db/pglite-extensions.mjs';
import { createEmptyPgDatabase } from '../helpers/db';
import { pgliteRaw, pgRaw } from '../helpers/raw-sql';

const ROOT = path.resolve(__dirname, '..', '..');
const SCHEMA = path.join(ROOT, 'prisma', 'schema.prisma');

/** One field of a model as written in schema.prisma. */
interface SchemaField {
  name: string;
  type: string;
  optional: boolean;
  list: boolean;
  relation: boolean;
  unique: boolean;
  id: boolean;
}
interface SchemaModel {
  name: string;
  fields: SchemaField[];
  indexes: { columns: string[]; unique: boolean; using?: string }[];
}

/**
 * Reads models, scalar fields (type, optionality), @unique/@id and @@index/@@unique from a
 * Prisma schema. The Prisma CLI's own DMMF needs its native engine, which it downloads and an
 * offline machine cannot, so the test reads the schema file itself: it is the source of truth.
 */
function parseSchema(text: string): { models: SchemaModel[]; enums: Map<string, string[]> } {
  const models: SchemaModel[] = [];
  const enums = new Map<string, string[]>();
  const lines = text.split('\n').map((l) => l.replace(/\/\/.*$/, '').trim());
  for (let i = 0; i < lines.length; i++) {
    const m = /^(model|enum)\s+(\w+)\s*\{$/.exec(lines[i]);
    if (!m) continue;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '}'; i++) if (lines[i]) body.push(lines[i]);
    if (m[1] === 'enum') {
      enums.set(m[2], body);
      continue;
    }
    models.push({ name: m[2], fields: [], indexes: [] });
  }
  const enumNames = new Set(enums.keys());
  const modelNames = new Set(models.map((x) => x.name));
  for (let i = 0, mi = -1; i < lines.length; i++) {
    const m = /^(model|enum)\s+(\w+)\s*\{$/.exec(lines[i]);
    if (!m) continue;
    if (m[1] === 'enum') continue;
    mi = models.findIndex((x) => x.name === m[2]);
    for (i++; i < lines.length && lines[i] !== '}'; i++) {
      const line = lines[i];
      if (!line) continue;
      const idx = /^@@(index|unique)\(\[((?:[^\]"]|"[^"]*")+)\]/.exec(line);
      if (idx) {
        // `name(ops: raw("gin_trgm_ops"))` is `name gin_trgm_ops` in pg_indexes' definition, `x(ops: JsonbPathOps)` `x jsonb_path_ops`.
        const columns = idx[2].split(',').map((s) => s.trim().replace(/\(sort:\s*Desc\)$/, ' DESC').replace(/\(ops:\s*raw\("(\w+)"\)\)$/, ' $1').replace(/\(ops:\s*JsonbPathOps\)$/, ' jsonb_path_ops'));
        const using = /type:\s*(\w+)/.exec(line)?.[1]?.toLowerCase() ?? 'btree';
        models[mi].indexes.push({ unique: idx[1] === 'unique', columns, using });
        continue;
      }
      if (line.startsWith('@@')) continue;
      const f = /^(\w+)\s+(\w+)(\[\])?(\?)?(.*)$/.exec(line);
      if (!f) throw new Error(`cannot read schema line: ${line}`);
      const type = f[2];
      models[mi].fields.push({
        name: f[1],
        type,
        list: !!f[3],
        optional: !!f[4],
        relation: modelNames.has(type),
        unique: /@unique\b/.test(f[5]),
        id: /@id\b/.test(f[5]),
      });
    }
  }
  void enumNames;
  return { models, enums };
}

const PG_TYPES: Record<string, string> = { Int: 'int4', String: 'text', Float: 'float8', DateTime: 'timestamp', Json: 'jsonb', Boolean: 'bool', BigInt: 'int8', Decimal: 'numeric', Bytes: 'bytea' };

/**
 * Compares a migrated database with the schema: every model is a table, every scalar field a
 * column of the right type and nullability, every enum a type with the same values, every
 * @unique / @@unique / @@index an index over the same columns. Returns the differences.
 */
async function drift(sql: RawSql, schemaText: string): Promise<string[]> {
  const { models, enums } = parseSchema(schemaText);
  const problems: string[] = [];
  const cols = await sql.query<{ table_name: string; column_name: string; udt_name: string; is_nullable: string }>(
    `SELECT table_name, column_name, udt_name, is_nullable FROM information_schema.columns WHERE table_schema = 'public'`,
  );
  const enumRows = await sql.query<{ typname: string; enumlabel: string }>(
    `SELECT t.typname, e.enumlabel FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid ORDER BY t.typname, e.enumsortorder`,
  );
  const idx = await sql.query<{ tablename: string; indexdef: string }>(`SELECT tablename, indexdef FROM pg_indexes WHERE schemaname = 'public'`);
  for (const [name, values] of enums) {
    const got = enumRows.filter((r) => r.typname === name).map((r) => r.enumlabel);
    if (got.join(',') !== values.join(',')) problems.push(`enum ${name}: schema [${values}] ≠ database [${got}]`);
  }
  for (const model of models) {
    const tableCols = cols.filter((c) => c.table_name === model.name);
    if (!tableCols.length) {
      problems.push(`model ${model.name}: no table`);
      continue;
    }
    for (const f of model.fields.filter((x) => !x.relation)) {
      const c = tableCols.find((x) => x.column_name === f.name);
      if (!c) {
        problems.push(`${model.name}.${f.name}: no column`);
        continue;
      }
      const want = enums.has(f.type) ? f.type : PG_TYPES[f.type];
      const got = f.list ? c.udt_name.replace(/^_/, '') : c.udt_name;
      if (want !== got) problems.push(`${model.name}.${f.name}: type ${f.type} wants ${want}, column is ${c.udt_name}`);
      if ((c.is_nullable === 'YES') !== f.optional) problems.push(`${model.name}.${f.name}: schema ${f.optional ? 'optional' : 'required'}, column ${c.is_nullable === 'YES' ? 'nullable' : 'NOT NULL'}`);
    }
    for (const c of tableCols) if (!model.fields.some((f) => f.name === c.column_name)) problems.push(`${model.name}.${c.column_name}: column not in schema`);
    // pg_indexes quotes only identifiers that need it ("jobId", not status): compare unquoted.
    const defs = idx.filter((r) => r.tablename === model.name).map((r) => r.indexdef.replaceAll('"', ''));
    const wanted = [
      ...model.indexes,
      ...model.fields.filter((f) => f.unique).map((f) => ({ columns: [f.name], unique: true })),
      ...model.fields.filter((f) => f.id).map((f) => ({ columns: [f.name], unique: true })),
    ];
    for (const w of wanted) {
      const colsSql = `(${w.columns.join(', ')})`;
      const using = 'using' in w && w.using ? w.using : 'btree';
      const ok = defs.some((d) => d.endsWith(colsSql) && /UNIQUE/.test(d) === w.unique && d.includes(` USING ${using} `));
      if (!ok) problems.push(`${model.name}: missing ${w.unique ? 'unique ' : ''}index on ${colsSql}`);
    }
  }
  return problems;
}

describe('migrations', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  it('migrates an empty PGlite database to exactly the Prisma schema (drift check)', async () => {
    const db = new PGlite({ extensions: await pgliteExtensions() });
    const r = await migrate(pgliteRaw(db));
    expect(r.applied).toEqual(readMigrations().map((m) => m.name));
    expect(await drift(pgliteRaw(db), readFileSync(SCHEMA, 'utf8'))).toEqual([]);
    await db.close();
  });

  it('migrates an empty PostgreSQL database to exactly the Prisma schema (drift check)', async () => {
    const { url, drop } = await createEmptyPgDatabase('drift');
    cleanups.push(drop);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await migrate(pgRaw(client));
      expect(await drift(pgRaw(client), readFileSync(SCHEMA, 'utf8'))).toEqual([]);
    } finally {
      await client.end();
    }
  });

  it('detects a field added to the schema without a migration', async () => {
    const db = new PGlite({ extensions: await pgliteExtensions() });
    await migrate(pgliteRaw(db));
    const schema = readFileSync(SCHEMA, 'utf8').replace(/(model Job \{\n)/, '$1  weight Int @default(0)\n');
    expect(await drift(pgliteRaw(db), schema)).toContain('Job.weight: no column');
    const optional = readFileSync(SCHEMA, 'utf8').replace('  name           String\n', '  name           String?\n');
    expect(await drift(pgliteRaw(db), optional)).toContain('Job.name: schema optional, column NOT NULL');
    const index = readFileSync(SCHEMA, 'utf8').replace('  @@index([name])\n', '  @@index([name])\n  @@index([executor])\n');
    expect(await drift(pgliteRaw(db), index)).toContain('Job: missing index on (executor)');
    await db.close();
  });

  it('is idempotent and records Prisma-compatible rows with sha256 checksums', async () => {
    const db = new PGlite({ extensions: await pgliteExtensions() });
    const raw = pgliteRaw(db);
    const first = await migrate(raw);
    const second = await migrate(raw);
    expect(second.applied).toEqual([]);
    expect(second.all).toEqual(first.all);
    const rows = await raw.query<{ migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number }>(
      'SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name',
    );
    const files = readMigrations();
    expect(rows.map((r) => r.migration_name)).toEqual(files.map((f) => f.name));
    for (const [i, r] of rows.entries()) {
      const bytes = readFileSync(path.join(ROOT, 'prisma', 'migrations', r.migration_name, 'migration.sql'));
      expect(r.checksum).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect(r.checksum).toBe(files[i].checksum);
      expect(r.finished_at).not.toBeNull();
      expect(r.applied_steps_count).toBe(1);
    }
    await db.close();
  });

  it('refuses a migration file changed after it was applied, and rolls back a failing one', async () => {
    const db = new PGlite({ extensions: await pgliteExtensions() });
    const raw = pgliteRaw(db);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'jd-mig-'));
    cpSync(path.join(ROOT, 'prisma', 'migrations'), dir, { recursive: true });
    await migrate(raw, readMigrations(dir));
    const first = readMigrations(dir)[0];
    writeFileSync(path.join(dir, first.name, 'migration.sql'), first.sql + '\n-- edited\n');
    await expect(migrate(raw, readMigrations(dir))).rejects.toThrow(/was modified after it was applied/);
    writeFileSync(path.join(dir, first.name, 'migration.sql'), first.sql);
    const broken = '29991231000000_broken';
    cpSync(path.join(dir, first.name), path.join(dir, broken), { recursive: true });
    writeFileSync(path.join(dir, broken, 'migration.sql'), 'CREATE TABLE "Half" (id int);\nSELECT no_such_function();\n');
    await expect(migrate(raw, readMigrations(dir))).rejects.toBeInstanceOf(MigrationError);
    const half = await raw.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'Half'`);
    expect(half).toEqual([]); // rolled back whole
    const rec = await raw.query(`SELECT 1 FROM "_prisma_migrations" WHERE migration_name = $1`, [broken]);
    expect(rec).toEqual([]);
    await db.close();
  });

  it('is safe when two servers migrate one PostgreSQL database at once (advisory lock)', async () => {
    const { url, drop } = await createEmptyPgDatabase('concurrent');
    cleanups.push(drop);
    const [a, b] = await Promise.all([openDatabase({ databaseUrl: url }), openDatabase({ databaseUrl: url })]);
    expect(a.migrations).toEqual(b.migrations);
    const rows = await a.prisma.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM "_prisma_migrations"`;
    expect(Number(rows[0].n)).toBe(readMigrations().length);
    await a.close();
    await b.close();
  });

  it('keeps PGlite data across close and reopen of its data folder', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'jd-pglite-'));
    const one = await openDatabase({ pgliteDir: dir });
    await one.prisma.job.create({ data: { name: 'persist', specYaml: 'x', spec: {}, specHash: 'h' } });
    await one.close();
    const two = await openDatabase({ pgliteDir: dir });
    expect(await two.prisma.job.count({ where: { name: 'persist' } })).toBe(1);
    expect(two.migrations).toEqual(readMigrations().map((m) => m.name));
    await two.close();
  });
});
