/**
 * A 401 sends the dashboard to the login page and back (`/login?next=…`), except while the page
 * is already leaving for it by itself: after a logout, a poll answered 401 before the logout's own
 * navigation must not turn `/login` into `/login?next=…` (the race a browser test ran into).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

const realLocation = globalThis.location;
const realFetch = globalThis.fetch;

afterEach(() => {
  Object.defineProperty(globalThis, 'location', { value: realLocation, configurable: true, writable: true });
  globalThis.fetch = realFetch;
  vi.resetModules();
});

/** A page at `/` whose navigations are recorded, and a server that answers every request 401. */
async function pageAt401() {
  const assigned: string[] = [];
  Object.defineProperty(globalThis, 'location', { value: { pathname: '/', search: '', assign: (u: string) => assigned.push(u) }, configurable: true, writable: true });
  globalThis.fetch = (async () => new Response(JSON.stringify({ title: 'Unauthorized' }), { status: 401 })) as typeof fetch;
  const api = await import('../../lib/ui/api');
  return { api, assigned };
}

describe('the login redirect of a 401', () => {
  it('sends the page to the login page and back', async () => {
    const { api, assigned } = await pageAt401();
    await expect(api.apiFetch('/api/jobs')).rejects.toThrow();
    expect(assigned).toEqual(['/login?next=%2F']);
  });

  it('does nothing once the page is leaving for the login page by itself (a logout)', async () => {
    const { api, assigned } = await pageAt401();
    api.leavingForLogin();
    await expect(api.apiFetch('/api/jobs')).rejects.toThrow();
    expect(assigned).toEqual([]);
  });
});
