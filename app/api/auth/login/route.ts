import { loginResponse } from '@/lib/api/login';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * POST /api/auth/login — exchange the admin token for a browser session.
 * Body: JSON `{ "token": "…", "next": "/jobs/3" }` → 200 `{ ok, next, expiresAt }` + session
 * cookie, or 401; or an HTML form (`token`, `next`) → 303 to `next` (or back to
 * /login?error=invalid). Public (no session needed), but cross-origin posts are refused (403).
 */
export const POST = route(async (req, _params, { ip }) => loginResponse(req, services().auth, services().store, ip), { public: true });
