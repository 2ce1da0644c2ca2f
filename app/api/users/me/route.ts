import { meView } from '@/lib/api/team';
import { route } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/users/me — who the caller is and what it may call: UserMe `{id, name, role, tokenPrefix, maxPriority, may}` (lib/api/team.ts meView). */
export const GET = route(async (_req, _params, { actor }) => Response.json(meView(actor!), { headers: { 'cache-control': 'no-store' } }));
