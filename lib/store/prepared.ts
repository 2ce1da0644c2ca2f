/**
 * The store's large statements prepared once on the embedded database (docs/design.md §4
 * "Prepared once on PGlite"). PGlite runs PostgreSQL in this process, one connection, with every
 * query an unnamed statement: parsed and planned anew each time, on the server's own thread.
 * For the guarded write (a dozen CTEs) planning was ~2 of its ~5.7 ms. Here such a statement is
 * `PREPARE`d once per distinct text and run as `EXECUTE name('v1', …)`: PostgreSQL plans its
 * first five runs and then keeps a generic plan when it costs no more, as for any prepared
 * statement. `EXECUTE` takes no bind parameters, so the values are sent as quoted literals that
 * the prepared statement's own casts (`$3::int`) convert — text is never spliced into the
 * statement itself.
 *
 * Only where one connection holds the session (PGlite, lib/db/session.ts `isSingleSession`): on a
 * PostgreSQL server a pool hands out connections that never saw the PREPARE, and its planning
 * runs in its own processes anyway. Prepared statements outlive a rolled-back transaction
 * (PostgreSQL keeps them per session), so a PREPARE inside a transaction stays valid.
 */
import type { Prisma, PrismaClient } from '../generated/prisma/client';

/** At most this many statements stay prepared; the least recently used is deallocated. */
export const PREPARED_MAX = 128;

/** Names are unique in the process: two stores may share one PGlite session (tests). */
let nextName = 0;

/** The statements prepared on one session: text → name, in least-recently-used order. */
export class PreparedStatements {
  private readonly names = new Map<string, string>();

  /** The name of `sql` when prepared (and marks it used), else undefined. */
  use(sql: string): string | undefined {
    const name = this.names.get(sql);
    if (name === undefined) return undefined;
    this.names.delete(sql);
    this.names.set(sql, name);
    return name;
  }

  /** Records `sql` as prepared under a new name; returns the name and the one to deallocate (if over PREPARED_MAX). */
  add(sql: string): { name: string; evict: string | null } {
    const name = `jd_stmt_${++nextName}`;
    this.names.set(sql, name);
    let evict: string | null = null;
    if (this.names.size > PREPARED_MAX) {
      const [oldest, oldName] = this.names.entries().next().value as [string, string];
      this.names.delete(oldest);
      evict = oldName;
    }
    return { name, evict };
  }

  /** Forgets `sql` (its PREPARE failed, or the session lost it). */
  forget(sql: string): void {
    this.names.delete(sql);
  }

  /** How many are prepared. */
  get size(): number {
    return this.names.size;
  }
}

/**
 * A parameter as a SQL string literal for `EXECUTE` (standard_conforming_strings is on in every
 * PostgreSQL since 9.1 and in PGlite: a quote doubled is the only escape), or null when the value
 * is not one the store sends as a plain scalar (the caller then runs the statement unprepared).
 */
export function literalOf(v: unknown): string | null {
  if (v === null) return 'NULL';
  if (typeof v === 'string') return v.includes('\0') ? null : `'${v.replaceAll("'", "''")}'`;
  if (typeof v === 'number') return Number.isFinite(v) ? `'${String(v)}'` : null;
  if (typeof v === 'boolean' || typeof v === 'bigint') return `'${String(v)}'`;
  return null;
}

/** A client a raw statement runs on: the store's own, or an interactive transaction's. */
type RawClient = PrismaClient | Prisma.TransactionClient;

/**
 * Runs `sql` with `params` (`$n::cast` placeholders, every one cast) — prepared on `prepared`'s
 * session when there is one and every value is a plain scalar, else as `$queryRawUnsafe` does.
 * Errors are the statement's own (a unique violation is still SQLSTATE 23505); a PREPARE that
 * fails (a parameter PostgreSQL cannot type) fails as the unprepared statement would on PGlite,
 * whose own bind infers the parameters' types the same way.
 */
export async function queryPrepared<T>(client: RawClient, prepared: PreparedStatements | null, sql: string, params: unknown[]): Promise<T[]> {
  const literals = prepared ? params.map(literalOf) : null;
  if (!prepared || !literals || literals.some((l) => l === null)) return client.$queryRawUnsafe<T[]>(sql, ...params);
  let name = prepared.use(sql);
  if (name === undefined) {
    const added = prepared.add(sql);
    name = added.name;
    try {
      if (added.evict) await client.$executeRawUnsafe(`DEALLOCATE ${added.evict}`);
      await client.$executeRawUnsafe(`PREPARE ${name} AS ${sql}`);
    } catch (err) {
      prepared.forget(sql);
      throw err;
    }
  }
  // No parameters: no parentheses (`EXECUTE name()` is a syntax error).
  return client.$queryRawUnsafe<T[]>(literals.length ? `EXECUTE ${name}(${literals.join(', ')})` : `EXECUTE ${name}`);
}
