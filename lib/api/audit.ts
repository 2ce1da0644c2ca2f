/**
 * The audit log's HTTP side (docs/design.md §15): record() appends one row for an action an API
 * route completed, auditPage() answers GET /api/audit (admins; filterable, bounded, paginated).
 * Nothing in the API edits or deletes a row.
 */
import type { Actor } from '../jobs/roles';
import { logger } from '../log';
import { appendAudit, listAudit, type AuditAction, type StoreScope } from '../store';
import { validate } from './request';
import { AuditQuerySchema } from './team-schemas';
import type { AuditRow } from './types';

export type { AuditRow } from './types';

/**
 * Appends the row of an action `actor` did. A failed append is logged, never undoes the action
 * (which has already happened): the server's log keeps the line then.
 */
export async function record(store: StoreScope, actor: (Omit<Actor, 'userId'> & { userId: number | null }) | null, action: AuditAction, target: string | null = null, detail: Record<string, unknown> | null = null): Promise<void> {
  try {
    await appendAudit(store, {
      action,
      userId: actor?.userId ?? null,
      userName: actor?.name ?? null,
      tokenPrefix: actor?.tokenPrefix ?? null,
      ip: actor?.ip ?? null,
      target,
      detail: detail as never,
    });
  } catch (err) {
    logger().error({ err, action, target, user: actor?.name }, 'audit row not written');
  }
}

/**
 * GET /api/audit?action=&userId=&since=&until=&before=&limit= — newest first; `next` is the
 * `before` of the next page (null at the end).
 * @throws ApiError 400 naming the query parameter.
 */
export async function auditPage(store: StoreScope, url: URL): Promise<{ events: AuditRow[]; next: number | null }> {
  const q = validate(AuditQuerySchema, Object.fromEntries(url.searchParams), 'query');
  const rows = await listAudit(store, {
    action: q.action,
    userId: q.userId,
    beforeId: q.before,
    since: q.since ? new Date(q.since) : undefined,
    until: q.until ? new Date(q.until) : undefined,
    limit: q.limit,
  });
  const events = rows.map((r) => ({ ...r, at: r.at.toISOString(), detail: r.detail ?? null }));
  return { events, next: rows.length === q.limit ? rows[rows.length - 1].id : null };
}
