import { timingSafeEqual } from 'node:crypto';
import { ApiError } from './errors';
import { logger } from '../log';
import { safeNextPath } from '../auth/origin';
import { LOGIN_PATH } from '../auth/policy';
import { parseCookies, issueSession, sessionSetCookie, viaHttps } from '../auth/session';
import type { AuthState } from '../auth/state';
import { mapRole, type OidcSettings } from '../auth/oidc-config';
import { OIDC_CALLBACK_PATH, beginFlow, finishFlow, flowClearCookie, flowCookieName, flowSetCookie, readFlow } from '../auth/oidc-flow';
import { ACCOUNT_NAME } from '../accounts';
import { createUser, updateUser, userByOidcSubject, userRow } from '../store/users';
import type { Store } from '../store';
import { record } from './audit';

/**
 * OIDC single sign-on behind GET /api/auth/oidc/start and GET /api/auth/oidc/callback
 * (docs/design.md §15 "Single sign-on"): the redirect to the provider, and the callback that
 * links the provider's user to a jobdeck user (created on first login, its role re-mapped from
 * the groups claim on every login) and sets the same session cookie a password login sets.
 */

/** Longest `sub` / user-name claim read (characters). */
const MAX_CLAIM = 255;

function settings(state: AuthState): OidcSettings {
  if (!state.oidc) throw new ApiError(404, 'Not Found', 'single sign-on is not configured (JOBDECK_OIDC_ISSUER is unset)');
  return state.oidc;
}

/** The origin redirect URIs are built on: JOBDECK_OIDC_BASE_URL, else the request's. */
function baseOf(s: OidcSettings, req: Request): string {
  return s.baseUrl ?? new URL(req.url).origin;
}

const noStore = { 'cache-control': 'no-store' };

/**
 * GET /api/auth/oidc/start[?next=/path]: a new flow (state, PKCE verifier, nonce in a signed
 * 10-minute cookie) and 302 to the provider's authorization endpoint.
 * @throws ApiError 404 (no SSO configured), 502 (the provider's metadata cannot be read).
 */
export async function oidcStartResponse(req: Request, state: AuthState): Promise<Response> {
  const s = settings(state);
  const url = new URL(req.url);
  const rawNext = url.searchParams.get('next');
  if (rawNext !== null && rawNext.length > 2048) throw new ApiError(400, 'Bad Request', '"next" must be at most 2048 characters', { field: 'next' });
  const next = safeNextPath(rawNext, url.origin);
  let begun: Awaited<ReturnType<typeof beginFlow>>;
  try {
    begun = await beginFlow(s, `${baseOf(s, req)}${OIDC_CALLBACK_PATH}`, next);
  } catch (err) {
    logger().error({ err, issuer: s.issuer }, 'OIDC discovery failed');
    throw new ApiError(502, 'Bad Gateway', `the identity provider ${s.issuer} could not be used: ${(err as Error).message}`);
  }
  const secure = viaHttps(req.headers.get('x-forwarded-proto')) || baseOf(s, req).startsWith('https:');
  return new Response(null, { status: 302, headers: { location: begun.url.href, 'set-cookie': flowSetCookie(state, begun.flow, secure), ...noStore } });
}

/** A jobdeck user name from the claims: preferred_username (else sub), lower-cased to the name rule. */
function nameFrom(claims: Record<string, unknown>): string {
  const raw = typeof claims.preferred_username === 'string' && claims.preferred_username ? claims.preferred_username : String(claims.sub);
  const name = raw.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[._-]+/, '').slice(0, 63);
  return name || 'sso-user';
}

class LoginRefused extends Error {}

/** True for a browser's navigation (it accepts HTML), which is sent back to /login instead of shown problem+json. */
const wantsHtml = (req: Request) => (req.headers.get('accept') ?? '').toLowerCase().includes('text/html');

/** Constant-time string equality. */
function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The library's error in words: its message, the provider's error code and description when it sent one. */
function describeError(err: unknown): string {
  const e = err as { message?: string; error?: string; error_description?: string; cause?: { message?: string; error?: string; error_description?: string } };
  const provider = e.error ?? e.cause?.error;
  const said = e.error_description ?? e.cause?.error_description;
  // openid-client's message is generic ("unexpected JWT claim value encountered"); its cause says which claim.
  const why = e.cause?.message && e.cause.message !== e.message ? ` (${e.cause.message})` : '';
  return [`${e.message ?? String(err)}${why}`, provider && `provider said ${provider}${said ? `: ${said}` : ''}`].filter(Boolean).join('; ').slice(0, 500);
}

/**
 * The user the checked claims log in as: the one linked to `<issuer> <sub>` (role updated to the
 * mapping), or a new one. A local user of the same name is never taken over.
 * @throws LoginRefused when no role maps, the user is disabled, or the name is another user's.
 */
async function linkUser(store: Store, s: OidcSettings, claims: Record<string, unknown>) {
  const role = mapRole(s.roles, claims[s.roleClaim]);
  if (!role) throw new LoginRefused(`no role is mapped for the groups in claim "${s.roleClaim}" (JOBDECK_OIDC_ROLES)`);
  const osUser = osUserFrom(s, claims);
  const subject = `${s.issuer} ${String(claims.sub)}`;
  const linked = await userByOidcSubject(store, subject);
  if (linked) {
    if (linked.disabledAt) throw new LoginRefused('this user is disabled');
    const patch = { ...(linked.role === role ? {} : { role }), ...(osUser !== undefined && osUser !== linked.osUser ? { osUser } : {}) };
    return Object.keys(patch).length === 0 ? linked : ((await updateUser(store, linked.id, patch)) ?? linked);
  }
  const name = nameFrom(claims);
  if (await userRow(store, { name })) throw new LoginRefused(`the user name "${name}" belongs to another jobdeck user; an admin must rename one of them`);
  return createUser(store, { name, role, oidcSubject: subject, ...(osUser !== undefined ? { osUser } : {}) });
}

/**
 * The OS account the id token names (JOBDECK_OIDC_OS_USER_CLAIM, docs/design.md §16); undefined
 * when no claim is configured or the token carries none (the user's mapping stays as it is).
 * Whether the account exists is checked at each launch (FAILED_PRECHECKS, saying why).
 * @throws LoginRefused for a value that is no OS account name.
 */
function osUserFrom(s: OidcSettings, claims: Record<string, unknown>): string | undefined {
  if (!s.osUserClaim) return undefined;
  const v = claims[s.osUserClaim];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string' || !ACCOUNT_NAME.test(v)) throw new LoginRefused(`the claim "${s.osUserClaim}" (JOBDECK_OIDC_OS_USER_CLAIM) is not an OS account name`);
  return v;
}

/** 401 problem+json, its detail said plainly (the flow cookie is cleared: one try per flow). */
function refused(state: AuthState, detail: string, secure: boolean): Response {
  return Response.json({ type: 'about:blank', title: 'Unauthorized', status: 401, detail }, { status: 401, headers: { 'content-type': 'application/problem+json', 'set-cookie': flowClearCookie(state, secure), ...noStore } });
}

/**
 * GET /api/auth/oidc/callback?code&state: checks the flow cookie, exchanges the code (the
 * library checks the id token's signature, issuer, audience, nonce; the state and PKCE verifier
 * must match), links the user, audits `login` (or `login.failed`, one row either way) and sets
 * the session cookie. Answers 200 with a tiny page that moves on to `next`: the session cookie is
 * SameSite=Strict, and a browser does not send it on a redirect chain that began at the provider.
 * @throws ApiError 404 (no SSO configured). Refusals answer 400 (no flow) or 401 problem+json —
 *   or, to a browser (Accept: text/html), 303 to /login?error=sso.
 */
export async function oidcCallbackResponse(req: Request, state: AuthState, store: Store, ip: string | null): Promise<Response> {
  const s = settings(state);
  const secure = viaHttps(req.headers.get('x-forwarded-proto')) || baseOf(s, req).startsWith('https:');
  const url = new URL(req.url);
  const fail = async (status: 400 | 401, detail: string, extra: Record<string, unknown> = {}) => {
    await record(store, { userId: null, name: '(sso)', role: 'viewer', tokenId: null, tokenPrefix: null, ip }, 'login.failed', null, { via: 'oidc', reason: detail, ...extra });
    logger().warn({ reason: detail }, 'OIDC login refused');
    // A browser goes back to the login page (the reason is in the audit log and the server log).
    if (wantsHtml(req)) return new Response(null, { status: 303, headers: { location: `${LOGIN_PATH}?error=sso`, 'set-cookie': flowClearCookie(state, secure), ...noStore } });
    if (status === 401) return refused(state, detail, secure);
    return Response.json({ type: 'about:blank', title: 'Bad Request', status, detail }, { status, headers: { 'content-type': 'application/problem+json', ...noStore } });
  };
  const providerError = url.searchParams.get('error');
  if (providerError) return fail(401, `the identity provider refused the login: ${providerError.slice(0, 200)}`);
  const flow = readFlow(state, parseCookies(req.headers.get('cookie')).get(flowCookieName(state))?.[0]);
  if (!flow) return fail(400, 'no login in progress (its cookie is missing, expired or altered); start again at /login');
  // Checked here too (the library checks it again) so the refusal can say what was wrong.
  if (!sameString(url.searchParams.get('state') ?? '', flow.state)) return fail(401, 'the state does not match the login this browser started (a forged or crossed callback)');
  // The redirect URI the code was issued for: the configured base, not what a proxy calls us.
  const callbackUrl = new URL(`${baseOf(s, req)}${OIDC_CALLBACK_PATH}${url.search}`);
  let claims: Record<string, unknown>;
  try {
    claims = await finishFlow(s, callbackUrl, flow);
  } catch (err) {
    return fail(401, `the sign-in could not be verified: ${describeError(err)}`);
  }
  if (typeof claims.sub !== 'string' || !claims.sub || claims.sub.length > MAX_CLAIM) return fail(401, 'the id token has no usable "sub"');
  let user;
  try {
    user = await linkUser(store, s, claims);
  } catch (err) {
    if (err instanceof LoginRefused) return fail(401, err.message, { sub: claims.sub });
    throw err;
  }
  state.directory.putUser(user);
  const { value } = issueSession(state, Date.now(), user.id);
  await record(store, { userId: user.id, name: user.name, role: user.role as never, tokenId: null, tokenPrefix: null, ip }, 'login', null, { via: 'oidc' });
  logger().info({ user: user.name }, 'logged in with single sign-on');
  const next = flow.next.startsWith('/') && !flow.next.startsWith('//') ? flow.next : '/';
  const href = next.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  const page = `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${href}"><title>Signed in</title><p>Signed in. <a href="${href}">Continue</a></p>`;
  const headers = new Headers({ 'content-type': 'text/html; charset=utf-8', ...noStore });
  headers.append('set-cookie', sessionSetCookie(state, value, { secure }));
  headers.append('set-cookie', flowClearCookie(state, secure));
  return new Response(page, { status: 200, headers });
}
