import { oidcStartResponse } from '@/lib/api/oidc';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * GET /api/auth/oidc/start[?next=/path] — begins a single sign-on: 302 to the identity
 * provider (authorization code + PKCE, state and nonce in a signed 10-minute cookie). Public;
 * 404 when JOBDECK_OIDC_ISSUER is unset, 502 when the provider's metadata cannot be read.
 */
export const GET = route(async (req) => oidcStartResponse(req, services().auth), { public: true });
