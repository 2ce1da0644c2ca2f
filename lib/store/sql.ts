/**
 * Parameters, encoding and decoding of the store's raw statements: values are always sent as
 * parameters (`$n::<cast>`), column names come from the column table (columns.ts) only, and a
 * row read back as `to_jsonb` is decoded to exactly what Prisma answers for it.
 */
import { Prisma } from '../generated/prisma/client';
import type { Column, ModelColumns } from './columns';

/** The parameters of one statement: each value sent once, referenced as `$n::cast`. */
export class Params {
  readonly values: unknown[] = [];

  /** Adds a value; returns its reference with the cast (`$3::int`). */
  add(value: unknown, cast: string): string {
    this.values.push(value);
    return `$${this.values.length}::${cast}`;
  }
}

/**
 * A Date as a TIMESTAMP(3) literal: UTC wall time without a zone (Prisma's convention for
 * DateTime columns), exact to the ms whatever the session's TimeZone.
 */
export function pgTimestamp(d: Date): string {
  return d.toISOString().replace('T', ' ').replace('Z', '');
}

/**
 * SQL NULL for a Json column in a write's `data` (Transition data): Prisma's input types take
 * no plain null there, and only lib/store touches the Prisma client.
 */
export const SQL_NULL: typeof Prisma.DbNull = Prisma.DbNull;

/**
 * A value written to a column, as the parameter sent with its cast (Prisma's input rules:
 * DateTime takes a Date or an ISO string; Int an integer; Json any JSON value, Prisma.JsonNull
 * for a JSON null, Prisma.DbNull for SQL NULL).
 * @throws TypeError for a value the column cannot hold (before any query).
 */
export function encodeValue(m: ModelColumns, column: string, col: Column, v: unknown): unknown {
  const bad = () => new TypeError(`${m.key}.${column}: cannot write ${typeof v === 'object' ? JSON.stringify(v) : String(v)} to a ${col.type} column`);
  if (col.type === 'jsonb') {
    if (v === null || v instanceof Prisma.NullTypes.DbNull) return null;
    if (v instanceof Prisma.NullTypes.JsonNull) return 'null';
    const s = JSON.stringify(v);
    if (s === undefined) throw bad();
    return s;
  }
  if (v === null) return null;
  switch (col.type) {
    case 'timestamp': {
      const d = v instanceof Date ? v : typeof v === 'string' ? new Date(v) : null;
      if (!d || Number.isNaN(d.getTime())) throw bad();
      return pgTimestamp(d);
    }
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) throw bad();
      return v;
    case 'float8':
      if (typeof v !== 'number' || !Number.isFinite(v)) throw bad();
      return v;
    case 'bool':
      if (typeof v !== 'boolean') throw bad();
      return v;
    case 'text':
    case 'enum':
      if (typeof v !== 'string') throw bad();
      return v;
  }
}

/** Prisma's numeric field update operations, as SQL operators. */
const ARITHMETIC: Readonly<Record<string, string>> = { increment: '+', decrement: '-', multiply: '*', divide: '/' };

/**
 * `"column" = …` for one entry of a write's `data`: a plain value, or one of Prisma's field
 * update operations (`set`; for Int / Float `increment`, `decrement`, `multiply`, `divide`).
 * Json values are always plain values. Undefined entries are skipped (Prisma's rule): null.
 * @throws Error when the column is not a writable column of the model (unknown, `id`, the
 *   status, a generated one); TypeError for a value or operation the column cannot take.
 */
export function assignment(p: Params, m: ModelColumns, column: string, v: unknown): string | null {
  if (v === undefined) return null;
  const col = m.columns.get(column);
  if (!col || column === 'id' || col.isStatus || col.generated) throw new Error(`transition data: "${column}" is not a writable column of ${m.key}`);
  const q = `"${column}"`;
  if (col.type !== 'jsonb' && v !== null && typeof v === 'object' && !(v instanceof Date)) {
    const ops = Object.entries(v).filter(([, x]) => x !== undefined);
    const [op, x] = ops.length === 1 ? ops[0] : [undefined, undefined];
    if (op === 'set') return `${q} = ${p.add(encodeValue(m, column, col, x), col.cast)}`;
    if (op !== undefined && Object.hasOwn(ARITHMETIC, op) && (col.type === 'int' || col.type === 'float8')) {
      return `${q} = ${q} ${ARITHMETIC[op]} ${p.add(encodeValue(m, column, col, x), col.cast)}`;
    }
    throw new TypeError(`${m.key}.${column}: unsupported update ${JSON.stringify(v)}`);
  }
  return `${q} = ${p.add(encodeValue(m, column, col, v), col.cast)}`;
}

/**
 * A row from its `to_jsonb` value, as Prisma answers it: DateTime columns as Dates, Json as the
 * parsed value, Float as a number, SQL NULL as null. Only the model's scalar columns.
 */
export function decodeRow<R>(m: ModelColumns, json: Record<string, unknown>): R {
  const row: Record<string, unknown> = {};
  for (const [column, col] of m.columns) {
    const v = json[column] ?? null;
    if (v === null) row[column] = null;
    else if (col.type === 'timestamp') row[column] = new Date(`${v as string}Z`);
    else if (col.type === 'float8') row[column] = typeof v === 'number' ? v : Number(v); // NaN / ±Infinity come as strings
    else row[column] = v;
  }
  return row as R;
}

/** The driver adapter's error under a raw query's Prisma P2010 error; undefined for any other. */
function driverErrorCause(err: unknown): { kind?: string; originalCode?: string; originalMessage?: string } | undefined {
  if (!(err instanceof Prisma.PrismaClientKnownRequestError) || err.code !== 'P2010') return undefined;
  return (err.meta?.driverAdapterError as { cause?: { kind?: string; originalCode?: string; originalMessage?: string } } | undefined)?.cause;
}

/**
 * True when PostgreSQL refused a statement for its data — SQLSTATE class 22 (data exception)
 * or 23 (integrity constraint violation), read from Prisma's driver adapter error — so that
 * nothing of it was written.
 */
export function refusedData(err: unknown): boolean {
  const code = driverErrorCause(err)?.originalCode;
  return typeof code === 'string' && /^2[23]/.test(code);
}

/**
 * A raw query's unique violation (Prisma P2010, driver error 23505 / UniqueConstraintViolation)
 * as the P2002 error Prisma's model calls raise, so callers keep one check: `meta.modelName` and
 * `meta.target` (the fields) are read from the violated index's name, which follows Prisma's
 * `<Model>_<field>_<field>_key` (e.g. Job_submissionId_key, Attempt_taskId_number_key). In
 * submitJob()'s statement only Job.submissionId can collide (ids are fresh, task indexes
 * distinct); in startAttempt()'s, Attempt (taskId, number). Any other error is returned as is.
 */
export function uniqueViolationAsP2002(err: unknown): unknown {
  if (!(err instanceof Prisma.PrismaClientKnownRequestError) || err.code !== 'P2010') return err;
  const cause = driverErrorCause(err);
  if (cause?.kind !== 'UniqueConstraintViolation' && cause?.originalCode !== '23505' && !/\b23505\b/.test(err.message)) return err;
  const index = /unique constraint "([^"]+)"/.exec(cause?.originalMessage ?? err.message)?.[1] ?? '';
  const named = /^([A-Za-z]+)_(\w+)_key$/.exec(index);
  const target = named ? named[2].split('_') : [index];
  return new Prisma.PrismaClientKnownRequestError(`Unique constraint failed on the fields: (${target.map((f) => `\`${f}\``).join(',')})`, {
    code: 'P2002',
    clientVersion: err.clientVersion,
    meta: { modelName: named?.[1], target },
  });
}
