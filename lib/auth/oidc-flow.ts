import { createHmac, timingSafeEqual } from 'node:crypto';
import * as client from 'openid-client';
import type { AuthState } from './state';
import { OIDC_CALLBACK_PATH, type OidcSettings } from './oidc-config';

export { OIDC_CALLBACK_PATH, OIDC_START_PATH } from './oidc-config';

/**
 * The OIDC authorization-code flow with PKCE, state and nonce (docs/design.md §15 "Single
 * sign-on"), on openid-client: the provider's metadata (discovered once per issuer and client),
 * the redirect to the provider, and the code exchange, whose id token the library checks
 * (signature, issuer, audience, nonce, expiry). What the flow must remember between the redirect
 * and the callback travels in a short-lived HMAC-signed HttpOnly cookie, so nothing is kept per
 * pending login on the server.
 */

/** How long a started login may take at the provider (ms). */
export const OIDC_FLOW_TTL_MS = 10 * 60_000;

/** What the flow cookie carries: state, PKCE verifier, nonce, where to go after, expiry (ms). */
export interface FlowState {
  state: string;
  verifier: string;
  nonce: string;
  next: string;
  exp: number;
}

const discovered = new Map<string, Promise<client.Configuration>>();

/**
 * The provider's configuration (discovered on first use, then cached; a failed discovery is
 * retried on the next login).
 * @throws the library's error when discovery fails (unreachable, or its metadata names another issuer).
 */
export function providerConfig(s: OidcSettings): Promise<client.Configuration> {
  const key = `${s.issuer} ${s.clientId}`;
  let p = discovered.get(key);
  if (!p) {
    // Plain http only passes config validation for a loopback issuer (tests, a provider on the
    // same host): openid-client refuses http unless told to.
    const insecure = new URL(s.issuer).protocol === 'http:';
    p = client.discovery(new URL(s.issuer), s.clientId, s.clientSecret, undefined, insecure ? { execute: [client.allowInsecureRequests] } : undefined);
    p.catch(() => discovered.delete(key));
    discovered.set(key, p);
  }
  return p;
}

/** The flow cookie's name (per data folder, like the session cookie's). */
export const flowCookieName = (state: AuthState) => `${state.cookieName}_oidc`;

function sign(key: Buffer, payload: string): string {
  return createHmac('sha256', key).update(`oidc-flow.${payload}`).digest('base64url');
}

/** Set-Cookie for a flow: HttpOnly, SameSite=Lax (the provider's redirect back is a cross-site navigation), only sent to the callback. */
export function flowSetCookie(state: AuthState, flow: FlowState, secure: boolean): string {
  const payload = Buffer.from(JSON.stringify(flow)).toString('base64url');
  return `${flowCookieName(state)}=${payload}.${sign(state.sessionKey, payload)}; Path=${OIDC_CALLBACK_PATH}; Max-Age=${OIDC_FLOW_TTL_MS / 1000}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** Set-Cookie that deletes the flow cookie (one use). */
export function flowClearCookie(state: AuthState, secure: boolean): string {
  return `${flowCookieName(state)}=; Path=${OIDC_CALLBACK_PATH}; Max-Age=0; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** The flow a cookie value carries, when its MAC is right and it has not expired; else null. Never throws. */
export function readFlow(state: AuthState, value: string | undefined, now = Date.now()): FlowState | null {
  if (!value || value.length > 2048) return null;
  const [payload, sig, extra] = value.split('.');
  if (!payload || !sig || extra !== undefined) return null;
  const want = Buffer.from(sign(state.sessionKey, payload));
  const got = Buffer.from(sig);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return null;
  try {
    const f = JSON.parse(Buffer.from(payload, 'base64url').toString()) as FlowState;
    return typeof f.exp === 'number' && f.exp > now && typeof f.state === 'string' && typeof f.verifier === 'string' && typeof f.nonce === 'string' && typeof f.next === 'string' ? f : null;
  } catch {
    return null;
  }
}

/** A new flow (random state, PKCE verifier, nonce) and the provider URL to send the browser to. */
export async function beginFlow(s: OidcSettings, redirectUri: string, next: string): Promise<{ flow: FlowState; url: URL }> {
  const config = await providerConfig(s);
  const flow: FlowState = { state: client.randomState(), verifier: client.randomPKCECodeVerifier(), nonce: client.randomNonce(), next, exp: Date.now() + OIDC_FLOW_TTL_MS };
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid profile',
    state: flow.state,
    nonce: flow.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
    code_challenge_method: 'S256',
  });
  return { flow, url };
}

/**
 * Exchanges the callback's code (`callbackUrl`: the URL the provider redirected to, with the
 * redirect URI's origin) and answers the id token's claims, checked by the library against the
 * issuer, our client id (audience), the flow's nonce and state, and the PKCE verifier.
 * @throws the library's error when anything does not match, or the provider refuses the code.
 */
export async function finishFlow(s: OidcSettings, callbackUrl: URL, flow: FlowState): Promise<client.IDToken> {
  const config = await providerConfig(s);
  const tokens = await client.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: flow.verifier, expectedNonce: flow.nonce, expectedState: flow.state, idTokenExpected: true });
  const claims = tokens.claims();
  if (!claims) throw new Error('the provider sent no id token');
  return claims;
}
