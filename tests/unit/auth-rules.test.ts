/**
 * The authorization table (lib/auth/rules.ts) against the roles as docs/design.md §15 states
 * them, written here independently: admins alone manage users, queues, webhooks and read the
 * audit log; a change to one job is own-checked; a viewer changes nothing but its own tokens and
 * session; only health and login are public. And the matcher picks the row the router would.
 */
import { describe, expect, it } from 'vitest';
import { authorize, ROUTE_RULES, ruleKeyFor } from '../../lib/auth/rules';

const keys = Object.keys(ROUTE_RULES);
const [method, pattern] = [(k: string) => k.split(' ')[0], (k: string) => k.split(' ')[1]];

describe('authorization table', () => {
  it('gives users, the audit log, webhooks and queue changes to admins only', () => {
    for (const k of keys) {
      const p = pattern(k);
      const adminOnly = (p.startsWith('/api/users') && p !== '/api/users/me') || p.startsWith('/api/audit') || p.startsWith('/api/webhooks') || (p.startsWith('/api/queues/') && method(k) !== 'GET');
      if (adminOnly) expect(ROUTE_RULES[k].role, k).toBe('admin');
    }
  });

  it('own-checks every change to one job, and lets no viewer change anything but its tokens and session', () => {
    for (const k of keys) {
      const p = pattern(k);
      if (p.startsWith('/api/jobs/[id]') && method(k) !== 'GET') expect(ROUTE_RULES[k], k).toEqual({ role: 'member', own: true });
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
