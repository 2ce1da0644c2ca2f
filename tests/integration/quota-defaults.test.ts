/**
 * The role defaults of the per-user quotas (docs/design.md §15 "Quotas"), against a real server
 * on each database started with JOBDECK_QUOTA_MEMBER_PENDING_JOBS and _RUNNING_CPUS: a member
 * without quotas of its own is held to its role's defaults — a job over the running-CPU default
 * waits with the numbers in its pending reason, a submit over the pending default is refused 429
 * with the numbers — while a member's own values override them; GET /api/users shows each
 * user's quotas and where they come from. A malformed or unknown JOBDECK_QUOTA_* variable stops
 * the start, naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { startServerProcess, type ServerProcess } from '../helpers/server';
import { useServerDatabase } from '../helpers/use-database';

interface Quota {
  value: number | null;
  source: 'user' | 'role' | null;
}
interface User {
  id: number;
  name: string;
  maxRunningCpus: number | null;
  maxPendingJobs: number | null;
  quotas: { maxRunningCpus: Quota; maxPendingJobs: Quota };
}

describe.each(DB_KINDS)('role default quotas (%s)', (kind) => {
  const fixture = useServerDatabase(kind, 'quota-defaults');
  let server: ServerProcess;
  const tokens: Record<string, string> = {};

  const as = (token: string, p: string, init: RequestInit = {}) =>
    fetch(new URL(p, server.url), { ...init, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });
  const json = async <T,>(r: Promise<Response>, status: number): Promise<T> => {
    const res = await r;
    const text = await res.text();
    expect(res.status, text).toBe(status);
    return JSON.parse(text) as T;
  };
  // Half a CPU each: the test fits a two-core machine whatever else runs.
  const spec = (name: string) => JSON.stringify({ yaml: `name: ${name}\nresources:\n  cpus: 0.5\nrun: sleep 300\n` });
  const submit = (who: string, name: string) => as(tokens[who], '/api/jobs', { method: 'POST', body: spec(name) });
  const job = async (id: number) => json<{ status: string; pendingReason: string | null }>(as(server.token, `/api/jobs/${id}`), 200);

  beforeAll(async () => {
    server = await fixture.start({ env: { JOBDECK_QUOTA_MEMBER_PENDING_JOBS: '1', JOBDECK_QUOTA_MEMBER_RUNNING_CPUS: '0.5' } });
    const users: Array<[string, string, Record<string, number>]> = [
      ['mia', 'member', {}],
      ['max', 'member', { maxRunningCpus: 1, maxPendingJobs: 3 }],
      ['vera', 'viewer', {}],
    ];
    for (const [name, role, quotas] of users) {
      const u = await json<{ id: number }>(as(server.token, '/api/users', { method: 'POST', body: JSON.stringify({ name, role, ...quotas }) }), 201);
      tokens[name] = (await json<{ token: string }>(as(server.token, '/api/tokens', { method: 'POST', body: JSON.stringify({ name: 'q', userId: u.id }) }), 201)).token;
    }
  });

  afterAll(async () => {
    await as(server.token, '/api/jobs/cancel', { method: 'POST', body: JSON.stringify({ all: true }) }).catch(() => undefined);
  });

  it('GET /api/users shows the quotas that apply and where they come from', async () => {
    const { users } = await json<{ users: User[] }>(as(server.token, '/api/users'), 200);
    const byName = Object.fromEntries(users.map((u) => [u.name, u]));
    expect(byName.mia).toMatchObject({ maxRunningCpus: null, maxPendingJobs: null, quotas: { maxRunningCpus: { value: 0.5, source: 'role' }, maxPendingJobs: { value: 1, source: 'role' } } });
    expect(byName.max).toMatchObject({ maxRunningCpus: 1, maxPendingJobs: 3, quotas: { maxRunningCpus: { value: 1, source: 'user' }, maxPendingJobs: { value: 3, source: 'user' } } });
    // No default for viewers (they submit nothing), none set for admins here.
    for (const name of ['vera', 'admin']) expect(byName[name].quotas).toEqual({ maxRunningCpus: { value: null, source: null }, maxRunningGpus: { value: null, source: null }, maxPendingJobs: { value: null, source: null } });
  });

  it("holds a member's job over the running default, refuses a submit over the pending default, and lets a user's own values override both", async () => {
    const running = (await json<{ id: number }>(submit('mia', 'first'), 201)).id;
    await expect.poll(async () => (await job(running)).status, { timeout: 120_000, message: `job ${running} never started` }).toBe('RUNNING');
    const held = (await json<{ id: number }>(submit('mia', 'second'), 201)).id;
    await expect.poll(async () => (await job(held)).pendingReason, { timeout: 120_000, message: `job ${held} got no pending reason` }).toMatch(
      /^user mia at its CPU quota, the member role's default \(0\.5 of 0\.5 CPUs running; needs 0\.5\)/,
    );
    expect((await job(held)).status).toBe('PENDING');

    const over = await submit('mia', 'third');
    expect(over.status).toBe(429);
    expect(await over.json()).toMatchObject({
      pending: 1,
      maxPendingJobs: 1,
      quotaSource: 'role',
      detail: "user mia has 1 job pending and may have 1 at once (the member role's default): wait for one to start, or cancel one",
    });

    // max's own values (1 CPU, 3 pending) win over the member defaults: two half-CPU jobs run.
    const maxJobs = [(await json<{ id: number }>(submit('max', 'max-1'), 201)).id, (await json<{ id: number }>(submit('max', 'max-2'), 201)).id];
    for (const id of maxJobs) await expect.poll(async () => (await job(id)).status, { timeout: 120_000, message: `max's job ${id} never started` }).toBe('RUNNING');

    // Setting mia's own quota overrides the default: her held job starts.
    await json(as(server.token, `/api/users/${(await json<{ users: User[] }>(as(server.token, '/api/users'), 200)).users.find((u) => u.name === 'mia')!.id}`, { method: 'PATCH', body: JSON.stringify({ maxRunningCpus: 1 }) }), 200);
    await expect.poll(async () => (await job(held)).status, { timeout: 120_000, message: `job ${held} did not start once mia's own quota allowed it` }).toBe('RUNNING');
    await json(as(server.token, '/api/jobs/cancel', { method: 'POST', body: JSON.stringify({ ids: [running, held, ...maxJobs] }) }), 200);
  });
});

describe('role default quotas at start', () => {
  it('a malformed or unknown JOBDECK_QUOTA_* variable stops the start, naming it', async () => {
    await expect(startServerProcess({ env: { JOBDECK_QUOTA_MEMBER_PENDING_JOBS: 'lots' } })).rejects.toThrow(/JOBDECK_QUOTA_MEMBER_PENDING_JOBS: expected a whole number of jobs from 0 to 1000000, got \\?"lots/);
    await expect(startServerProcess({ env: { JOBDECK_QUOTA_VIEWER_PENDING_JOBS: '1' } })).rejects.toThrow(/JOBDECK_QUOTA_VIEWER_PENDING_JOBS: not a jobdeck setting/);
  });
});
