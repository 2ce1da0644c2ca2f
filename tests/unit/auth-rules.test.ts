/**
 * The authorization table (lib/auth/rules.ts) against the roles as docs/design.md §15 states
 * them, written here independently: admins alone manage users, queues, webhooks and read the
 * audit log; a change to one job is own-checked; a viewer changes nothing but its own tokens and
 * session; only health and login are public. And the matcher picks the row the router would.
 */
import { describe, expect, it } from 'vitest';
import { authorize, permissionsOf, ROUTE_RULES, ruleKeyFor } from '../../lib/auth/rules';
import { ROLES } from '../../lib/jobs/roles';

const keys = Object.keys(ROUTE_RULES);
const [method, pattern] = [(k: string) => k.split(' ')[0], (k: string) => k.split(' ')[1]];

describe('authorization table', () => {
  it('gives users, the audit log, webhooks, queue changes and /metrics to admins only', () => {
    expect(keys).toContain('GET /metrics');
    for (const k of keys) {
      const p = pattern(k);
      // /metrics: the admin (or the metrics token, which the HTTP gate checks before the table), as the README says.
      const adminOnly = (p.startsWith('/api/users') && p !== '/api/users/me') || p.startsWith('/api/audit') || p.startsWith('/api/webhooks') || (p.startsWith('/api/queues/') && method(k) !== 'GET') || p === '/metrics';
      if (adminOnly) expect(ROUTE_RULES[k].role, k).toBe('admin');
    }
  });

  it('own-checks every change to one job, and lets no viewer change anything but its tokens and session', () => {
    for (const k of keys) {
      const p = pattern(k);
      if (p.startsWith('/api/jobs/[id]') && method(k) !== 'GET') expect(ROUTE_RULES[k], k).toEqual({ role: 'member', own: true });
      // A group's and a schedule's changes are its owner's, like a job's.
      if ((p.startsWith('/api/groups/[id]') || p.startsWith('/api/schedules/[name]')) && method(k) !== 'GET') expect(ROUTE_RULES[k], k).toEqual({ role: 'member', own: true });
      const viewerMayChange = ['POST /api/auth/logout', 'POST /api/validate', 'POST /api/tokens', 'DELETE /api/tokens/[id]', 'POST /api/auth/login'];
      if (method(k) !== 'GET' && !viewerMayChange.includes(k)) expect(authorize('viewer', method(k), p.replace(/\[[a-z]+\]/g, '1')).ok, k).toBe(false);
    }
  });

  it('has exactly the four public rows (health, login, and the single sign-on redirect and callback)', () => {
    expect(keys.filter((k) => ROUTE_RULES[k].role === 'public').sort()).toEqual(['GET /api/auth/oidc/callback', 'GET /api/auth/oidc/start', 'GET /api/health', 'POST /api/auth/login']);
  });

  it('matches literal segments before dynamic ones and refuses a path without a row', () => {
    expect(ruleKeyFor('GET', '/api/users/me')).toBe('GET /api/users/me');
    expect(ruleKeyFor('PATCH', '/api/users/7')).toBe('PATCH /api/users/[id]');
    expect(ruleKeyFor('POST', '/api/jobs/cancel')).toBe('POST /api/jobs/cancel');
    expect(ruleKeyFor('POST', '/api/jobs/12/cancel')).toBe('POST /api/jobs/[id]/cancel');
    expect(ruleKeyFor('HEAD', '/api/jobs')).toBe('GET /api/jobs');
    expect(ruleKeyFor('GET', '/api/jobs//logs')).toBeNull();
    expect(authorize('admin', 'GET', '/api/nothing')).toEqual({ ok: false, status: 403, detail: 'no authorization rule for GET /api/nothing' });
    expect(authorize('member', 'PUT', '/api/queues/gpu')).toMatchObject({ ok: false, detail: 'PUT /api/queues/[name] needs the admin role; you are member' });
  });
});

describe('permissionsOf (what GET /api/users/me answers as `may`)', () => {
  it('lists every non-public row a role passes, and no other, as authorize() decides', () => {
    for (const role of ROLES) {
      const may = permissionsOf(role);
      for (const k of keys) {
        const passes = ROUTE_RULES[k].role !== 'public' && authorize(role, method(k), pattern(k).replace(/\[[a-z]+\]/g, '1')).ok;
        expect(k in may, `${role} ${k}`).toBe(passes);
      }
    }
  });

  it('says `own` where a member may change only its own job and a non-admin only its own tokens; an admin reaches everything', () => {
    const member = permissionsOf('member');
    expect(member['POST /api/jobs/[id]/cancel']).toBe('own');
    expect(member['DELETE /api/jobs/[id]']).toBe('own');
    expect(member['PATCH /api/jobs/[id]']).toBe('own');
    expect(member['GET /api/tokens']).toBe('own');
    expect(member['POST /api/jobs']).toBe('any');
    expect(member['PUT /api/queues/[name]']).toBeUndefined();
    expect(member['GET /api/webhooks']).toBeUndefined();
    expect(permissionsOf('viewer')['GET /api/tokens']).toBe('own');
    expect(permissionsOf('viewer')['POST /api/jobs']).toBeUndefined();
    expect(Object.values(permissionsOf('admin')).every((r) => r === 'any')).toBe(true);
  });
});
