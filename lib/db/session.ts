/**
 * Which Prisma clients run every query in one database session: those of an embedded database
 * (PGlite, one connection, in this thread or its worker), registered by openDatabase. What a
 * statement leaves in the session — a prepared statement — is there for the next one
 * (lib/store/prepared.ts). A module of its own, importing nothing: lib/store reads it without
 * pulling the database's opening code (PGlite, migrations) into every route's bundle.
 */
import type { PrismaClient } from '../generated/prisma/client';

const singleSession = new WeakSet<PrismaClient>();

/** Registers `prisma` as the client of a one-session database (openDatabase, PGlite). */
export function markSingleSession(prisma: PrismaClient): void {
  singleSession.add(prisma);
}

/**
 * True when every query of `prisma` runs in one session (a PGlite opened by openDatabase). False
 * on PostgreSQL (a pool of connections) and for a client openDatabase did not open.
 */
export function isSingleSession(prisma: PrismaClient): boolean {
  return singleSession.has(prisma);
}
