/**
 * The store's knowledge of the tables, from ONE source: the data model Prisma generated from
 * prisma/schema.prisma (the client's runtime DMMF: per model its fields, their kind and type).
 * A column added to the schema is written, cast and decoded by the raw statements of lib/store
 * without an edit here. tests/integration/store-columns.test.ts checks the table against the
 * migrated database and round-trips a write of every column.
 *
 * Assumptions the schema keeps (the test fails otherwise): model and field names are the table
 * and column names (no @@map / @map), DateTime columns are TIMESTAMP(3) (Prisma's default for
 * PostgreSQL), enum columns have the enum's own type.
 */
import type { $Enums, PrismaClient } from '../generated/prisma/client';
import type { AttemptStatus, Entity, JobStatus, TaskStatus } from '../jobs/status';

/** SQL type of a column, as the store casts a parameter to it and decodes its `to_jsonb` value. */
export type ColumnType = 'int' | 'float8' | 'text' | 'jsonb' | 'timestamp' | 'bool' | 'enum';

/** One column of a model. */
export interface Column {
  type: ColumnType;
  /** The SQL cast of a parameter written to it (fixed text from the data model, never data). */
  cast: string;
  /** The column holds the entity's status (written only by a transition's `to`). */
  isStatus: boolean;
  /** The database computes it (GENERATED ALWAYS … STORED): read, never written. */
  generated: boolean;
}

/** A model's table and its scalar columns, in schema order. */
export interface ModelColumns {
  /** The store's name of it (`job`, `task`, `attempt`, `event`), used in error messages. */
  key: Entity | 'event';
  model: string;
  /** The table name, quoted for SQL. */
  table: string;
  /** The status enum's type, quoted for SQL (`"JobStatus"`); null for a model without status. */
  statusCast: string | null;
  /** Column name → column. */
  columns: ReadonlyMap<string, Column>;
}

/** The models the store writes by raw SQL: the three entities with a status, and JobEvent. */
export type ColumnTable = Readonly<Record<Entity | 'event', ModelColumns>>;

/** Which Prisma model each of the store's tables is. */
const MODEL_OF: Readonly<Record<Entity | 'event', string>> = { job: 'Job', task: 'Task', attempt: 'Attempt', event: 'JobEvent' };

/**
 * Columns the database generates, per model. Prisma's schema cannot say so (it declares them as
 * plain fields), so they are named here; tests/integration/store-columns.test.ts checks this list
 * against the migrated tables.
 */
const GENERATED: Readonly<Record<string, readonly string[]>> = {
  // `[metadata]`, for the search's jsonb `@>` filter (docs/design.md "Search").
  Job: ['metadataSet'],
};

/** Prisma scalar types and the SQL type of their PostgreSQL column. */
const SCALAR: Readonly<Record<string, { type: ColumnType; cast: string }>> = {
  Int: { type: 'int', cast: 'int' },
  Float: { type: 'float8', cast: 'float8' },
  String: { type: 'text', cast: 'text' },
  Json: { type: 'jsonb', cast: 'jsonb' },
  DateTime: { type: 'timestamp', cast: 'timestamp(3)' },
  Boolean: { type: 'bool', cast: 'boolean' },
};

/** The part of Prisma's runtime data model the store reads. */
interface RuntimeDataModel {
  models: Record<string, { dbName?: string | null; fields: Array<{ name: string; kind: string; type: string; dbName?: string | null }> }>;
}

/**
 * Reads the column table from a Prisma client's data model (the generated client carries it;
 * with the `prisma-client` generator it is reachable only on the client instance).
 * @throws Error when the client has no data model, a model is missing or mapped to another
 *   table name, or a column has a type the store cannot write (BigInt, Decimal, Bytes, …).
 */
export function columnsOf(prisma: PrismaClient): ColumnTable {
  const dm = (prisma as unknown as { _runtimeDataModel?: RuntimeDataModel })._runtimeDataModel;
  if (!dm?.models) throw new Error('lib/store: the Prisma client carries no data model (a Prisma upgrade may have moved it): the store cannot build its statements');
  const read = (key: Entity | 'event', model: string): ModelColumns => {
    const m = dm.models[model];
    if (!m) throw new Error(`lib/store: the Prisma data model has no model ${model}`);
    if (m.dbName && m.dbName !== model) throw new Error(`lib/store: model ${model} is mapped to table "${m.dbName}"; the store names tables by model`);
    const columns = new Map<string, Column>();
    let statusCast: string | null = null;
    for (const f of m.fields) {
      if (f.kind === 'object') continue;
      if (f.dbName && f.dbName !== f.name) throw new Error(`lib/store: ${model}.${f.name} is mapped to column "${f.dbName}"; the store names columns by field`);
      let col: Column;
      const generated = GENERATED[model]?.includes(f.name) ?? false;
      if (f.kind === 'enum') col = { type: 'enum', cast: `"${f.type}"`, isStatus: f.name === 'status', generated };
      else if (f.kind === 'scalar' && Object.hasOwn(SCALAR, f.type)) col = { ...SCALAR[f.type], isStatus: false, generated };
      else throw new Error(`lib/store: ${model}.${f.name} has type ${f.type} (${f.kind}), which the store cannot write`);
      if (col.isStatus) statusCast = col.cast;
      columns.set(f.name, col);
    }
    return { key, model, table: `"${model}"`, statusCast, columns };
  };
  const table = {} as Record<Entity | 'event', ModelColumns>;
  for (const [key, model] of Object.entries(MODEL_OF) as Array<[Entity | 'event', string]>) table[key] = read(key, model);
  for (const e of ['job', 'task', 'attempt'] as const) {
    if (!table[e].statusCast) throw new Error(`lib/store: model ${table[e].model} has no enum column "status"`);
  }
  return table;
}

// ─── compile-time check: lib/jobs/status.ts's statuses are the schema's enums ────────────────
// A status added to one and not the other fails tsc here (tests/unit/status.test.ts checks the
// values at run time too).
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Check<T extends true> = T;
export type StatusEnumChecks = [
  Check<Equals<JobStatus, $Enums.JobStatus>>,
  Check<Equals<TaskStatus, $Enums.TaskStatus>>,
  Check<Equals<AttemptStatus, $Enums.AttemptStatus>>,
];
