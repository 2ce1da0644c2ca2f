/**
 * The database's liveness question, apart from lib/db/client.ts so that the route handlers that
 * ask it (GET /api/health) bundle no database driver: the server hands them its open client.
 */
import type { PrismaClient } from '../generated/prisma/client';

/** Asks the database a trivial question (`SELECT 1`): resolves when it answers. @throws the driver's error when it does not. */
export async function pingDatabase(d: { prisma: PrismaClient }): Promise<void> {
  await d.prisma.$queryRaw`SELECT 1`;
}
