import { auditPage } from '@/lib/api/audit';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/audit?action=&userId=&since=&until=&before=&limit= — the audit log, newest first (admins). */
export const GET = route(async (req) => Response.json(await auditPage(services().store, new URL(req.url)), { headers: { 'cache-control': 'no-store' } }));
