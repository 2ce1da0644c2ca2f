import { logoutResponse } from '@/lib/api/login';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * POST /api/auth/logout — ends the browser session: the session id is revoked server-side and
 * the cookie cleared. JSON/fetch → 200 `{ ok: true }`; an HTML form post → 303 to /login.
 * Needs credentials like every other route (a stale cookie is harmless: it no longer verifies).
 */
export const POST = route(async (req) => logoutResponse(req, services().auth));
