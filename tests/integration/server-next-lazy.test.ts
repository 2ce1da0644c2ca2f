/**
 * The dashboard's pages load on the first page request, not at start (lib/server/next-app.ts):
 * a server asked only through the API never loads Next.js; the first page after a start loads it
 * once and is served; a server whose JOBDECK_NEXT_DIST has no build refuses to start, naming the
 * command to run. Real server processes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../helpers/server';
import { waitFor } from './monitor-helpers';

const LOADED = 'dashboard pages loaded (first page request since start)';
const started: ServerProcess[] = [];
afterEach(async () => {
  for (const s of started.splice(0)) await s.dispose();
});

describe('the dashboard loads on its first page request', () => {
  it('not for API requests; once for pages, which are served', async () => {
    const s = await startServerProcess();
    started.push(s);
    expect((await s.api('/api/jobs')).status).toBe(200);
    expect((await s.api('/api/health')).status).toBe(200);
    // A job's whole life through the API: still no page loaded.
    const r = await s.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: 'run: echo hi\n' });
    expect(r.status).toBe(201);
    expect(s.output()).not.toContain(LOADED);

    const [a, b] = await Promise.all([s.api('/login'), s.api('/login')]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await a.text()).toContain('</html>');
    expect((await s.api('/')).status).toBe(200);
    await waitFor(async () => (s.output().includes(LOADED) ? true : null), 'the load to be logged');
    // Two page requests at once still load it once.
    expect(s.output().split(LOADED).length - 1).toBe(1);
  });

  it('a server without a build refuses to start and says what to run', async () => {
    const err = await startServerProcess({ env: { JOBDECK_NEXT_DIST: '.next-never-built' } }).then(
      (s) => {
        started.push(s);
        return null;
      },
      (e: Error) => e,
    );
    expect(err?.message).toContain('the web app is not built (no .next-never-built/BUILD_ID in');
    expect(err?.message).toContain('run `npm run build` once (with JOBDECK_NEXT_DIST=.next-never-built)');
  });
});
