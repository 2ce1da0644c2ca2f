/**
 * The OIDC settings read at start (lib/auth/oidc-config.ts): what is required together, what is
 * refused (each message names its variable), and the group → role mapping.
 */
import { describe, expect, it } from 'vitest';
import { loadOidcSettings, mapRole, parseRoleRules } from '../../lib/auth/oidc-config';

const BASE = { JOBDECK_OIDC_ISSUER: 'https://idp.example/realms/x', JOBDECK_OIDC_CLIENT_ID: 'jobdeck', JOBDECK_OIDC_CLIENT_SECRET: 's3cret' };

describe('loadOidcSettings', () => {
  it('is off without an issuer, and defaults the rest', () => {
    expect(loadOidcSettings({})).toBeNull();
    const s = loadOidcSettings(BASE)!;
    expect(s).toMatchObject({ issuer: 'https://idp.example/realms/x', clientId: 'jobdeck', baseUrl: null, roleClaim: 'groups', label: 'idp.example', roles: [{ group: '*', role: 'viewer' }] });
  });

  it('names the variable that is missing or malformed', () => {
    expect(() => loadOidcSettings({ JOBDECK_OIDC_CLIENT_ID: 'x' })).toThrow(/^JOBDECK_OIDC_ISSUER: required/);
    expect(() => loadOidcSettings({ ...BASE, JOBDECK_OIDC_CLIENT_ID: '' })).toThrow(/^JOBDECK_OIDC_CLIENT_ID: required/);
    expect(() => loadOidcSettings({ ...BASE, JOBDECK_OIDC_CLIENT_SECRET: ' ' })).toThrow(/^JOBDECK_OIDC_CLIENT_SECRET: required/);
    expect(() => loadOidcSettings({ ...BASE, JOBDECK_OIDC_ISSUER: 'not a url' })).toThrow(/^JOBDECK_OIDC_ISSUER: expected an absolute URL/);
    expect(() => loadOidcSettings({ ...BASE, JOBDECK_OIDC_ISSUER: 'http://idp.example' })).toThrow(/^JOBDECK_OIDC_ISSUER: must be an https/);
    expect(() => loadOidcSettings({ ...BASE, JOBDECK_OIDC_BASE_URL: 'https://jobs.example/app' })).toThrow(/^JOBDECK_OIDC_BASE_URL: expected scheme/);
    expect(() => loadOidcSettings({ ...BASE, JOBDECK_OIDC_ROLE_CLAIM: 'a b' })).toThrow(/^JOBDECK_OIDC_ROLE_CLAIM/);
    expect(() => loadOidcSettings({ ...BASE, JOBDECK_OIDC_ROLES: 'admins=root' })).toThrow(/^JOBDECK_OIDC_ROLES: role must be one of viewer, member, admin, got "root"/);
    expect(() => loadOidcSettings({ ...BASE, JOBDECK_OIDC_ROLES: 'admins' })).toThrow(/^JOBDECK_OIDC_ROLES: expected group=role/);
    expect(() => loadOidcSettings({ ...BASE, JOBDECK_OIDC_ROLES: ',' })).toThrow(/^JOBDECK_OIDC_ROLES: expected group=role items/);
    expect(() => parseRoleRules(Array.from({ length: 101 }, (_, i) => `g${i}=viewer`).join(','))).toThrow(/at most 100 items/);
  });

  it('allows plain http only on a loopback issuer, and keeps a base URL as its origin', () => {
    expect(loadOidcSettings({ ...BASE, JOBDECK_OIDC_ISSUER: 'http://127.0.0.1:9000' })!.issuer).toBe('http://127.0.0.1:9000');
    expect(loadOidcSettings({ ...BASE, JOBDECK_OIDC_ISSUER: 'http://localhost:9000/' })!.issuer).toBe('http://localhost:9000');
    expect(loadOidcSettings({ ...BASE, JOBDECK_OIDC_BASE_URL: 'https://jobs.example/' })!.baseUrl).toBe('https://jobs.example');
  });
});

describe('mapRole', () => {
  const rules = parseRoleRules('admins=admin, devs=member, *=viewer');

  it('gives the highest listed role, else the * role', () => {
    expect(mapRole(rules, ['devs', 'admins'])).toBe('admin');
    expect(mapRole(rules, ['devs'])).toBe('member');
    expect(mapRole(rules, 'devs')).toBe('member');
    expect(mapRole(rules, ['other'])).toBe('viewer');
    expect(mapRole(rules, undefined)).toBe('viewer');
    expect(mapRole(rules, [42, { devs: 1 }])).toBe('viewer');
  });

  it('refuses (null) a user no group maps when there is no * item', () => {
    const strict = parseRoleRules('devs=member');
    expect(mapRole(strict, ['other'])).toBeNull();
    expect(mapRole(strict, ['devs'])).toBe('member');
  });
});
