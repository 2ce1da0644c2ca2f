/**
 * The audit log (docs/design.md §15 "Authorization"): one row per audited action, written with
 * the change it records where that change is a single statement family here, and read back by
 * admins. Append-only: the table refuses UPDATE and DELETE (its migration's trigger).
 */
import type { AuditEvent, Prisma } from '../generated/prisma/client';
import type { StoreScope } from './handle';
import { queryPrepared } from './prepared';
import { pgTimestamp } from './sql';

export { AUDIT_ACTIONS, type AuditAction } from '../jobs/audit-actions';
import type { AuditAction } from '../jobs/audit-actions';

/**
 * Who a row the server writes on its own names (the retention policy's removals): no user, no
 * token, no address — every actor column null (a failed login of an unknown name keeps the name
 * it gave, so the two never look alike).
 */
export const SERVER_ACTOR = { userId: null, userName: null, tokenPrefix: null, ip: null } as const;

/** Most ids a row written by the server lists in its `detail` (the count says how many there were). */
export const AUDIT_MAX_IDS = 100;

/** One row to append. */
export interface AuditEntry {
  action: AuditAction;
  userId: number | null;
  userName: string | null;
  tokenPrefix: string | null;
  ip: string | null;
  target?: string | null;
  detail?: Prisma.InputJsonValue | null;
}

/** The row's INSERT: one text, every value cast, so that PGlite keeps it prepared (prepared.ts) — a submit appends one. */
const AUDIT_INSERT = `INSERT INTO "AuditEvent" ("at", "action", "userId", "userName", "tokenPrefix", "ip", "target", "detail")
  VALUES ($1::timestamp(3), $2::text, $3::int, $4::text, $5::text, $6::text, $7::text, $8::jsonb)`;

/** Appends one row (`at`: now). */
export async function appendAudit(store: StoreScope, e: AuditEntry): Promise<void> {
  const detail = e.detail === undefined || e.detail === null ? null : JSON.stringify(e.detail);
  await queryPrepared(store.prisma, store.prepared, AUDIT_INSERT, [pgTimestamp(new Date()), e.action, e.userId, e.userName, e.tokenPrefix, e.ip, e.target ?? null, detail]);
}

/** What listAudit() selects. */
export interface AuditFilter {
  action?: string;
  userId?: number;
  /** Only rows before this id (the next page). */
  beforeId?: number;
  since?: Date;
  until?: Date;
  /** Page size, 1–500. */
  limit: number;
}

/** A page of rows, newest first. */
export function listAudit(store: StoreScope, f: AuditFilter): Promise<AuditEvent[]> {
  const where: Prisma.AuditEventWhereInput = {};
  if (f.action) where.action = f.action;
  if (f.userId !== undefined) where.userId = f.userId;
  if (f.beforeId !== undefined) where.id = { lt: f.beforeId };
  if (f.since || f.until) where.at = { ...(f.since ? { gte: f.since } : {}), ...(f.until ? { lt: f.until } : {}) };
  return store.prisma.auditEvent.findMany({ where, orderBy: { id: 'desc' }, take: f.limit });
}
