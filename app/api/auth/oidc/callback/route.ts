import { oidcCallbackResponse } from '@/lib/api/oidc';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * GET /api/auth/oidc/callback?code&state — where the identity provider sends the browser back:
 * the code is exchanged and the id token checked (issuer, audience, nonce, state, PKCE), the
 * user linked or created with its mapped role, the session cookie set (200 page moving on to
 * `next`). Public; refused logins answer 400/401 and are audited as `login.failed`.
 */
export const GET = route(async (req, _params, { ip }) => oidcCallbackResponse(req, services().auth, services().store, ip), { public: true });
