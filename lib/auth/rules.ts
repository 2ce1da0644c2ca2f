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
  /** Changes one job (or group, or schedule): a member only its own (checked where it is read). */
  own?: boolean;
  /** Acts on tokens: a non-admin only on its own. */
  self?: boolean;
  /**
   * Makes a credential that would outlive the caller's (a token, a session, a password): refused
   * to an attempt's own token, whose life is its attempt's (docs/design.md §16).
   */
  mints?: boolean;
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
  // Groups (arrays, sweeps) and schedules: a member changes only its own (lib/control/groups.ts,
  // schedules.ts check the group's or schedule's owner with mayChangeJob); a schedule's jobs run
  // with its owner's rights.
  'GET /api/groups': V,
  'GET /api/groups/[id]': V,
  'DELETE /api/groups/[id]': OWN,
  'POST /api/groups/[id]/cancel': OWN,
  'POST /api/groups/[id]/rerun-failed': OWN,
  'GET /api/schedules': V,
  'POST /api/schedules': M,
  'GET /api/schedules/[name]': V,
  'PATCH /api/schedules/[name]': OWN,
  'DELETE /api/schedules/[name]': OWN,
  'POST /api/schedules/[name]/pause': OWN,
  'POST /api/schedules/[name]/resume': OWN,
  'POST /api/schedules/[name]/run': OWN,
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
  'POST /api/tokens': { ...SELF, mints: true },
  'DELETE /api/tokens/[id]': SELF,
  'GET /api/users': A,
  'POST /api/users': { ...A, mints: true },
  'GET /api/users/me': V,
  'PATCH /api/users/[id]': { ...A, mints: true },
  'GET /api/audit': A,
  'GET /ws/jobs': V,
  'GET /ws/jobs/[id]': V,
  // Admins; Prometheus uses the read-only metrics token instead (lib/auth/gate.ts metricsVerdict).
  'GET /metrics': A,
};

/** One row of ROUTE_RULES split once: its method and its path segments (null: a `[param]`). */
interface CompiledRule {
  key: string;
  method: string;
  segs: Array<string | null>;
  literals: number;
}

/** The table's rows by method and segment count, compiled at first use (every request asks). */
let compiled: Map<string, CompiledRule[]> | null = null;

function compiledRules(): Map<string, CompiledRule[]> {
  if (compiled) return compiled;
  const out = new Map<string, CompiledRule[]>();
  for (const key of Object.keys(ROUTE_RULES)) {
    const [method, pattern] = key.split(' ');
    const segs = pattern.split('/').map((s) => (/^\[[A-Za-z0-9_]+\]$/.test(s) ? null : s));
    const row = { key, method, segs, literals: segs.filter((s) => s !== null).length };
    const at = `${method} ${segs.length}`;
    out.set(at, [...(out.get(at) ?? []), row]);
  }
  return (compiled = out);
}

/** The rule key (`METHOD pattern`) of the table's row matching a request, or null. */
export function ruleKeyFor(method: string, pathname: string): string | null {
  const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  const parts = pathname.split('/');
  let best: CompiledRule | null = null;
  for (const row of compiledRules().get(`${m} ${parts.length}`) ?? []) {
    let ok = true;
    for (let i = 0; i < parts.length && ok; i++) ok = row.segs[i] === null ? parts[i] !== '' : row.segs[i] === parts[i];
    // Literal segments win over dynamic ones (/api/users/me before /api/users/[id]), as the router's.
    if (ok && (!best || row.literals > best.literals)) best = row;
  }
  return best?.key ?? null;
}

/** The outcome of authorize(). */
export type Authorization = { ok: true; rule: RouteRule } | { ok: false; status: 403; detail: string };

/**
 * May a caller with `role` make this request? Its rule's least role must be met; a request with
 * no rule is refused (fail closed), and so is a `mints` rule for an attempt's own token
 * (`attemptToken`). Own-job and own-token checks come later, where the job or token is read.
 */
export function authorize(role: Role, method: string, pathname: string, attemptToken = false): Authorization {
  const key = ruleKeyFor(method, pathname);
  if (!key) return { ok: false, status: 403, detail: `no authorization rule for ${method.toUpperCase()} ${pathname}` };
  const rule = ROUTE_RULES[key];
  if (attemptToken && rule.mints) return { ok: false, status: 403, detail: `${method.toUpperCase()} ${key.split(' ')[1]} makes a credential that would outlive the attempt; an attempt's own token (JOBDECK_TOKEN) may not call it` };
  if (rule.role === 'public' || roleAtLeast(role, rule.role)) return { ok: true, rule };
  return { ok: false, status: 403, detail: `${method.toUpperCase()} ${key.split(' ')[1]} needs the ${rule.role} role; you are ${role}` };
}

/**
 * How far a role may use one row of the table: `any` — on anything the row covers; `own` — only
 * on its own jobs (an `own` row) or its own tokens (a `self` row); a non-admin's only.
 */
export type Reach = 'any' | 'own';

/**
 * What `role` may call: every non-public row of the table it passes, keyed as the table is
 * (`"PUT /api/queues/[name]"`), with its reach. The dashboard shows a control or a page only when
 * the row behind it is here (GET /api/users/me answers it as `may`), so the browser reads the
 * same table the server enforces instead of a copy of it.
 */
export function permissionsOf(role: Role): Record<string, Reach> {
  const out: Record<string, Reach> = {};
  for (const [key, rule] of Object.entries(ROUTE_RULES)) {
    if (rule.role === 'public' || !roleAtLeast(role, rule.role)) continue;
    out[key] = (rule.own || rule.self) && role !== 'admin' ? 'own' : 'any';
  }
  return out;
}
