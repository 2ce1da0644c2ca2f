/**
 * The SkyPilot corpus (tests/fixtures/skypilot) run: every file whose outcome is "accepted" (with
 * or without warnings) is submitted to a real server process and runs to SUCCEEDED on the local
 * executor — a warned key changes nothing about how the task runs, and the SKYPILOT_* variables
 * and secrets the files use are there; the any_of alternative chosen is shown. PGlite and PostgreSQL.
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=.next-cli npx next build`, and the same
 * JOBDECK_NEXT_DIST when running vitest.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { JobDetail, SubmitResult } from '../../lib/api/types';
import { DB_KINDS } from '../helpers/db';
import type { ServerProcess } from '../helpers/server';
import { skypilotCorpus } from '../helpers/skypilot-corpus';
import { useServerDatabase } from '../helpers/use-database';
import { waitTerminal } from './cli-run';

// Files for the Slurm executor are the Slurm suites' (this server runs the local executor).
const runnable = skypilotCorpus().filter((c) => c.accepted && !/infra: slurm/.test(c.text));

describe.each(DB_KINDS)('SkyPilot corpus runs to SUCCEEDED (%s)', (kind) => {
  let server: ServerProcess;
  const database = useServerDatabase(kind, 'skypilot-corpus-run');

  beforeAll(async () => {
    server = await database.start({ env: { JOBDECK_EXECUTOR: 'local', JOBDECK_LOCAL_GPUS: '0' } });
  });

  it('holds runnable files', () => {
    expect(runnable.length).toBeGreaterThan(10);
  });

  it.each(runnable.map((c) => [c.file, c] as const))('%s', async (file, c) => {
    const res = await server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ yaml: c.text, filename: file }) });
    expect(res.status, await res.clone().text()).toBe(201);
    const { id } = (await res.json()) as SubmitResult;
    const end = await waitTerminal(server, id, 60_000);
    const detail = (await (await server.api(`/api/jobs/${id}`)).json()) as JobDetail;
    expect(end.status, JSON.stringify(detail.tasks.map((t) => t.statusReason))).toBe('SUCCEEDED');
    expect(detail.warnings).toHaveLength(c.warnings.length);
    // The alternative chosen at submit is shown (no GPUs here: the second of any-of.yaml).
    if (file === 'any-of.yaml') expect(detail.tasks[0].resources.alternative).toEqual({ key: 'any_of', index: 1, of: 2 });
  });
});
