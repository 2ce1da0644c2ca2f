import { beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { Prisma, type PrismaClient } from '../../lib/generated/prisma/client';
import { startAttempt, submitJob, transitionMany, type AnyTransition, type Column, type ModelColumns, type Store } from '../../lib/store';

/**
 * The store's column table (lib/store/columns.ts) comes from the Prisma client's data model: it
 * must list exactly the scalar fields Prisma generated for each model, match the columns of the
 * migrated database (name and SQL type), and a guarded write of EVERY writable column of Job,
 * Task and Attempt — whatever columns the schema has — must answer the row Prisma reads back.
 */

// A zone far from UTC for this test process: a DateTime read or written as local time shows.
process.env.TZ = 'Pacific/Chatham';

const SCALAR_FIELDS = {
  job: Prisma.JobScalarFieldEnum,
  task: Prisma.TaskScalarFieldEnum,
  attempt: Prisma.AttemptScalarFieldEnum,
  event: Prisma.JobEventScalarFieldEnum,
} as const;

/** What information_schema says of a column with this store type. */
function expectedSqlType(col: Column): { data_type: string; udt_name?: string; datetime_precision?: number } {
  switch (col.type) {
    case 'int':
      return { data_type: 'integer' };
    case 'float8':
      return { data_type: 'double precision' };
    case 'text':
      return { data_type: 'text' };
    case 'jsonb':
      return { data_type: 'jsonb' };
    case 'bool':
      return { data_type: 'boolean' };
    case 'timestamp':
      return { data_type: 'timestamp without time zone', datetime_precision: 3 };
    case 'enum':
      return { data_type: 'USER-DEFINED', udt_name: col.cast.replace(/"/g, '') };
  }
}

/**
 * A value for every writable column of a row, different from what the row holds: foreign keys
 * and other `…Id` columns keep their value (they must point at rows that exist).
 */
function everyColumn(m: ModelColumns, row: Record<string, unknown>, tag: string): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const [name, col] of m.columns) {
    if (name === 'id' || col.isStatus || col.generated) continue;
    if (/Id$/.test(name)) {
      data[name] = row[name];
      continue;
    }
    switch (col.type) {
      case 'int':
        data[name] = ((row[name] as number | null) ?? 0) + 7;
        break;
      case 'float8':
        data[name] = 0.1 + 0.2;
        break;
      case 'text':
        data[name] = `${tag} ${name} ü '"; --`;
        break;
      case 'jsonb':
        data[name] = { column: name, list: [1, 2.5, null, 'x', true], deep: { empty: {} } };
        break;
      case 'bool':
        data[name] = !row[name];
        break;
      case 'timestamp':
        data[name] = new Date(Date.UTC(2026, 1, 3, 4, 5, 6, 789) + name.length);
        break;
      case 'enum':
        data[name] = row[name];
        break;
    }
  }
  return data;
}

describe.each(DB_KINDS)('store column table on %s', (kind) => {
  const t = useDatabase(kind, `store-columns-${kind}`);
  let prisma: PrismaClient;
  let store: Store;
  beforeAll(() => {
    ({ prisma, store } = t);
  });

  it('lists exactly the scalar fields Prisma generated for each model, in schema order', () => {
    for (const [key, fields] of Object.entries(SCALAR_FIELDS) as Array<[keyof typeof SCALAR_FIELDS, Record<string, string>]>) {
      expect([...store.columns[key].columns.keys()]).toEqual(Object.values(fields));
    }
    expect(['job', 'task', 'attempt'].map((e) => store.columns[e as 'job'].statusCast)).toEqual(['"JobStatus"', '"TaskStatus"', '"AttemptStatus"']);
  });

  it('matches the migrated tables: every column, its SQL type', async () => {
    for (const m of Object.values(store.columns)) {
      const rows = await prisma.$queryRaw<Array<{ column_name: string; data_type: string; udt_name: string; datetime_precision: number | null; is_generated: string }>>`
        SELECT column_name, data_type, udt_name, datetime_precision, is_generated FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = ${m.model} ORDER BY ordinal_position`;
      expect(rows.map((r) => r.column_name).sort()).toEqual([...m.columns.keys()].sort());
      // The generated columns the store never writes are exactly the database's.
      expect(rows.filter((r) => r.is_generated === 'ALWAYS').map((r) => r.column_name)).toEqual([...m.columns].filter(([, c]) => c.generated).map(([n]) => n));
      for (const r of rows) {
        const want = expectedSqlType(m.columns.get(r.column_name)!);
        const got: Record<string, unknown> = { data_type: r.data_type };
        if (want.udt_name !== undefined) got.udt_name = r.udt_name;
        if (want.datetime_precision !== undefined) got.datetime_precision = r.datetime_precision;
        expect({ column: `${m.model}.${r.column_name}`, ...got }).toEqual({ column: `${m.model}.${r.column_name}`, ...want });
      }
    }
  });

  it('a guarded write of every writable column of Job, Task and Attempt answers the row Prisma reads back', async () => {
    const job = await submitJob(store, { name: 'columns', specYaml: 'run: true\n', spec: {}, specHash: 'h', cpus: 1, tasks: [{ name: 't0', spec: {} }] });
    const [t0] = job.tasks;
    const a = await startAttempt(store, { taskId: t0.id, taskFrom: 'PENDING', number: 1, cause: 'first' });
    if (a.outcome !== 'applied') throw new Error('attempt lost');
    const writes: Array<{ tr: AnyTransition; read: () => Promise<unknown> }> = [
      {
        tr: { entity: 'attempt', id: a.row.id, from: 'STARTING', to: 'RUNNING', data: everyColumn(store.columns.attempt, a.row, kind) as never },
        read: () => prisma.attempt.findUniqueOrThrow({ where: { id: a.row.id } }),
      },
      {
        tr: { entity: 'task', id: t0.id, from: 'STARTING', to: 'RUNNING', data: everyColumn(store.columns.task, (await prisma.task.findUniqueOrThrow({ where: { id: t0.id } })) as never, kind) as never },
        read: () => prisma.task.findUniqueOrThrow({ where: { id: t0.id } }),
      },
      {
        tr: { entity: 'job', id: job.id, from: 'PENDING', to: 'RUNNING', data: everyColumn(store.columns.job, job, kind) as never },
        read: () => prisma.job.findUniqueOrThrow({ where: { id: job.id } }),
      },
    ];
    for (const w of writes) {
      const r = await transitionMany(store, [w.tr]);
      expect(r.outcome).toBe('applied');
      if (r.outcome !== 'applied') return;
      const fresh = (await w.read()) as Record<string, unknown>;
      expect(r.rows[0]).toStrictEqual(fresh);
      // The values written, read back through Prisma (the job's updatedAt is the write's own time).
      const { updatedAt: _u, ...written } = w.tr.data as Record<string, unknown>;
      expect(fresh).toMatchObject(written);
    }
  });
});
