import { readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * Which requests need no credentials — the ONE list (everything else needs a token or session).
 * A route handler marked `apiRoute(…, { public: true })` is public only if it is also listed
 * here: the outer gate in the custom server refuses it otherwise.
 */

/**
 * Header the custom server's API router sets to the client's address, for the audit log; the HTTP
 * gate drops any a client sent, so only the server says it.
 */
export const PEER_HEADER = 'x-jobdeck-peer';

/** The login page. */
export const LOGIN_PATH = '/login';

/** Public API endpoints: method → exact paths. */
const PUBLIC_API: Record<string, readonly string[]> = {
  // Single sign-on: the redirect to the provider, and its redirect back (checked by the flow).
  GET: ['/api/health', '/api/auth/oidc/start', '/api/auth/oidc/callback'],
  HEAD: ['/api/health'],
  // Answers 401 itself unless the body carries the right token.
  POST: ['/api/auth/login'],
};

/** Files anyone may fetch (no job data in them). */
const PUBLIC_FILES = ['/favicon.ico', '/robots.txt'];

/** Options of isPublicRequest(). */
export interface PublicPolicy {
  /** Next.js dev mode: its HMR and dev overlay endpoints are open (development on loopback only). */
  dev?: boolean;
  /** URL paths of the files in public/ (see listPublicFiles). */
  publicFiles?: ReadonlySet<string>;
}

/** Lists public/ as URL paths (`public/logo.svg` → `/logo.svg`), recursively; empty when absent. */
export function listPublicFiles(projectDir: string): Set<string> {
  const out = new Set<string>();
  const root = path.join(/*turbopackIgnore: true*/ projectDir, 'public');
  const walk = (dir: string, prefix: string) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isDirectory()) walk(path.join(/*turbopackIgnore: true*/ dir, e.name), `${prefix}/${e.name}`);
      else if (e.isFile()) out.add(`${prefix}/${e.name}`);
    }
  };
  walk(root, '');
  return out;
}

/**
 * True when `method pathname` needs no credentials: GET/HEAD /api/health, GET
 * /api/auth/oidc/start and /callback, POST /api/auth/login,
 * GET/HEAD /login, Next's build assets (/_next/static/…), favicon/robots and the files in
 * public/; in dev mode also Next's /_next/… and /__nextjs… endpoints. `pathname` must already be
 * normalised (`new URL(…).pathname`, which resolves `..` and `%2e%2e`).
 */
export function isPublicRequest(method: string, pathname: string, policy: PublicPolicy = {}): boolean {
  const m = method.toUpperCase();
  if (PUBLIC_API[m]?.includes(pathname)) return true;
  if (policy.dev && (pathname.startsWith('/_next/') || pathname.startsWith('/__nextjs'))) return true;
  if (m !== 'GET' && m !== 'HEAD') return false;
  if (pathname === LOGIN_PATH) return true;
  if (pathname.startsWith('/_next/static/')) return true;
  if (PUBLIC_FILES.includes(pathname)) return true;
  return !!policy.publicFiles?.has(pathname);
}

/** True for the REST API (answers problem+json) as opposed to pages (redirect to /login). */
export function isApiPath(pathname: string): boolean {
  return pathname === '/api' || pathname.startsWith('/api/');
}
