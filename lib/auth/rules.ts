import { roleAtLeast, type Role } from '../jobs/roles';

/**
 * Who may call what — the ONE authorization table (docs/design.md §15). Every API route, the
 * WebSockets and /metrics have a row: `METHOD pattern` (patterns as the API router names them,
 * `[name]` a dynamic segment) → the least role that may call it, and whether a member may only
 * touch its own job (`own`: the check is lib/control's, with lib/jobs/roles.ts mayChangeJob) or
 * its own tokens (`self`). apiRoute() (lib/api/handler.ts) and the WebSocket gate apply it; a
 * request with no row is refused (403), and the generated route × role test fails for a route
 * added without one.
 */

/** One row of the table. */
export interface RouteRule {
  /** Least role allowed; 'public' needs no credentials (also listed in lib/auth/policy.ts). */
  role: Role | 'public';
  /** Changes one job: a member only its own (checked where the job is read). */
  own?: boolean;
  /** Acts on tokens: a non-admin only on its own. */
  self?: boolean;
}

const V: RouteRule = { role: 'viewer' };
const M: RouteRule = { role: 'member' };
const OWN: RouteRule = { role: 'member', own: true };
const A: RouteRule = { role: 'admin' };
const SELF: RouteRule = { role: 'viewer', self: true };

/** `METHOD pattern` → rule. HEAD follows GET; OPTIONS is answered by the router itself. */
export const ROUTE_RULES: Readonly<Record<string, RouteRule>> = {
  'GET /api/health': { role: 'public' },
  'POST /api/auth/login': { role: 'public' },
  'POST /api/auth/logout': V,
  'GET /api/auth/oidc/start': { role: 'public' },
  'GET /api/auth/oidc/callback': { role: 'public' },
  'GET /api/insights': V,
  'GET /api/monitor': V,
  'GET /api/openapi.json': V,
  'POST /api/validate': V,
  'POST /api/uploads': M,
  'GET /api/jobs': V,
  'POST /api/jobs': M,
  'GET /api/jobs/counts': V,
  // Bulk: a member's selection is narrowed to its own jobs (lib/control/cancel.ts).
  'POST /api/jobs/cancel': M,
  'GET /api/jobs/[id]': V,
  'PATCH /api/jobs/[id]': OWN,
  'DELETE /api/jobs/[id]': OWN,
  'POST /api/jobs/[id]/cancel': OWN,
  'POST /api/jobs/[id]/rerun': OWN,
  'GET /api/jobs/[id]/logs': V,
  'GET /api/jobs/[id]/logs/all': V,
  'GET /api/jobs/[id]/logs/download': V,
  'GET /api/jobs/[id]/notifications': V,
  // Reads the logs the list selects: whoever may read one job's logs may search them.
  'GET /api/logs/grep': V,
  'GET /api/queues': V,
  'GET /api/queues/[name]': V,
  'PUT /api/queues/[name]': A,
  'DELETE /api/queues/[name]': A,
  'GET /api/webhooks': A,
  'POST /api/webhooks': A,
  'GET /api/webhooks/[name]': A,
  'PATCH /api/webhooks/[name]': A,
  'DELETE /api/webhooks/[name]': A,
  'POST /api/webhooks/[name]/rotate': A,
  'POST /api/webhooks/[name]/test': A,
  'GET /api/webhooks/[name]/deliveries': A,
  'POST /api/webhooks/[name]/deliveries/[delivery]/redeliver': A,
  'GET /api/tokens': SELF,
  'POST /api/tokens': SELF,
  'DELETE /api/tokens/[id]': SELF,
  'GET /api/users': A,
  'POST /api/users': A,
  'GET /api/users/me': V,
  'PATCH /api/users/[id]': A,
  'GET /api/audit': A,
  'GET /ws/jobs': V,
  'GET /ws/jobs/[id]': V,
  'GET /metrics': V,
};

/** The rule key (`METHOD pattern`) of the table's row matching a request, or null. */
export function ruleKeyFor(method: string, pathname: string): string | null {
  const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  const parts = pathname.split('/');
  let best: { key: string; literals: number } | null = null;
  for (const key of Object.keys(ROUTE_RULES)) {
    const [km, pattern] = key.split(' ');
    if (km !== m) continue;
    const segs = pattern.split('/');
    if (segs.length !== parts.length) continue;
    let literals = 0;
    let ok = true;
    for (let i = 0; i < segs.length && ok; i++) {
      if (/^\[[A-Za-z0-9_]+\]$/.test(segs[i])) ok = parts[i] !== '';
      else if (segs[i] === parts[i]) literals++;
      else ok = false;
    }
    // Literal segments win over dynamic ones (/api/users/me before /api/users/[id]), as the router's.
    if (ok && (!best || literals > best.literals)) best = { key, literals };
  }
  return best?.key ?? null;
}

/** The outcome of authorize(). */
export type Authorization = { ok: true; rule: RouteRule } | { ok: false; status: 403; detail: string };

/**
 * May a caller with `role` make this request? Its rule's least role must be met; a request with
 * no rule is refused (fail closed). Own-job and own-token checks come later, where the job or
 * token is read.
 */
export function authorize(role: Role, method: string, pathname: string): Authorization {
  const key = ruleKeyFor(method, pathname);
  if (!key) return { ok: false, status: 403, detail: `no authorization rule for ${method.toUpperCase()} ${pathname}` };
  const rule = ROUTE_RULES[key];
  if (rule.role === 'public' || roleAtLeast(role, rule.role)) return { ok: true, rule };
  return { ok: false, status: 403, detail: `${method.toUpperCase()} ${key.split(' ')[1]} needs the ${rule.role} role; you are ${role}` };
}
