/**
 * Re-run through the API's lib layer (lib/api/jobs.ts rerun → lib/control/rerun.ts), against both
 * databases: a job is submitted again with what it was submitted with — the YAML as stored
 * (secrets included, though the API shows them masked), the name and envs given at launch, the
 * metadata — and gets the origin of whoever asked; the detail shows the launch overrides (masked)
 * and the origin; the request fields are validated.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, DB_KINDS, type TestDatabase } from '../helpers/db';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { ApiError } from '../../lib/api/errors';
import { detail, rerun, submit } from '../../lib/api/jobs';
import { parseRerunRequest, parseSubmitRequest } from '../../lib/api/request';
import { MASKED_VALUE } from '../../lib/auth/secrets';
import { createStore, setPendingPriority, type Store } from '../../lib/store';

const TRAINING = `name: train-small
envs:
  EPOCHS: "30"
  WANDB_API_KEY: file-secret-1
run: echo "epochs $EPOCHS"
`;

function jsonRequest(url: string, body: unknown): Request {
  return new Request(`http://x${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

async function apiError(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe.each(DB_KINDS)('re-run (lib) on %s', (kind) => {
  let t: TestDatabase;
  let db: PrismaClient;
  let store: Store;
  beforeAll(async () => {
    t = await createTestDatabase(kind, `api-rerun-${kind}`);
    db = t.db.prisma;
    store = createStore(db);
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('re-submits the YAML with the name, envs and metadata given at launch, and the new origin', async () => {
    const body = { yaml: TRAINING, filename: 'examples/training-like.yaml', name: 'renamed-train', envs: { EPOCHS: '2', HF_TOKEN: 'launch-secret-2' }, metadata: { team: 'vision' }, submissionId: 'cli-1', origin: 'cli' };
    const first = await submit(store, await parseSubmitRequest(jsonRequest('/api/jobs', body)));
    const again = await rerun(store, first.result.id, 'dashboard');
    expect(again.created).toBe(true);
    expect(again.result.id).not.toBe(first.result.id);
    // A re-run is a new job, not a repeat of the submission id.
    expect(again.result.submissionId).toBeNull();

    const [a, b] = await Promise.all([first.result.id, again.result.id].map((id) => db.job.findUniqueOrThrow({ where: { id }, include: { tasks: true } })));
    expect(b.name).toBe('renamed-train');
    expect(b.specHash).toBe(a.specHash);
    expect(b.specYaml).toBe(TRAINING);
    expect(b.metadata).toEqual({ team: 'vision' });
    expect(b.tasks[0].spec).toMatchObject({ envs: { EPOCHS: '2', HF_TOKEN: 'launch-secret-2', WANDB_API_KEY: 'file-secret-1' } });
    expect(b.launch).toEqual({ name: 'renamed-train', envs: { EPOCHS: '2', HF_TOKEN: 'launch-secret-2' }, filename: 'examples/training-like.yaml' });
    expect([a.origin, b.origin]).toEqual(['cli', 'dashboard']);

    // What the API shows: the overrides beside the YAML, secrets masked in both.
    const view = await detail(store, b.id);
    expect(view.origin).toBe('dashboard');
    expect(view.launch).toEqual({ name: 'renamed-train', envs: { EPOCHS: '2', HF_TOKEN: MASKED_VALUE } });
    expect(view.specYaml).toContain(`WANDB_API_KEY: ${MASKED_VALUE}`);
    expect(view.tasks[0].envs).toMatchObject({ EPOCHS: '2', HF_TOKEN: MASKED_VALUE, WANDB_API_KEY: MASKED_VALUE });
    // A re-run of the re-run is the same job again.
    const third = await rerun(store, b.id, 'api');
    expect((await db.job.findUniqueOrThrow({ where: { id: third.result.id } })).specHash).toBe(a.specHash);
  });

  it('keeps the priority given at launch, and the one set while the job was pending', async () => {
    const first = await submit(store, await parseSubmitRequest(jsonRequest('/api/jobs', { yaml: TRAINING, priority: 900, origin: 'cli' })));
    const again = await rerun(store, first.result.id, 'dashboard');
    expect((await db.job.findUniqueOrThrow({ where: { id: again.result.id } })).priority).toBe(900);

    const plain = await submit(store, await parseSubmitRequest(jsonRequest('/api/jobs', { yaml: TRAINING })));
    expect((await db.job.findUniqueOrThrow({ where: { id: plain.result.id } })).priority).toBe(500);
    expect(await setPendingPriority(store, plain.result.id, 120)).toEqual({ written: true });
    const bumped = await rerun(store, plain.result.id, 'api');
    expect(await db.job.findUniqueOrThrow({ where: { id: bumped.result.id } })).toMatchObject({ priority: 120, launch: { priority: 120 } });
  });

  it('keeps a one-command job its -n name and its command', async () => {
    const first = await submit(store, await parseSubmitRequest(jsonRequest('/api/jobs', { cmd: "printf '\\033[31mred\\033[0m\\n'", name: 'ansi-long', origin: 'cli' })));
    const again = await rerun(store, first.result.id, 'cli');
    const [a, b] = await Promise.all([first.result.id, again.result.id].map((id) => db.job.findUniqueOrThrow({ where: { id }, include: { tasks: true } })));
    expect(b.name).toBe('ansi-long');
    expect(b.tasks[0].spec).toMatchObject({ run: "printf '\\033[31mred\\033[0m\\n'" });
    expect(b.specHash).toBe(a.specHash);
  });

  it('a job submitted without overrides re-runs with none; a raw YAML body takes origin in the query', async () => {
    const req = new Request('http://x/api/jobs?origin=dashboard', { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: TRAINING });
    const first = await submit(store, await parseSubmitRequest(req));
    const row = await db.job.findUniqueOrThrow({ where: { id: first.result.id } });
    expect(row).toMatchObject({ origin: 'dashboard', launch: null, name: 'train-small' });
    const again = await rerun(store, first.result.id, 'api');
    expect(await db.job.findUniqueOrThrow({ where: { id: again.result.id } })).toMatchObject({ name: 'train-small', specHash: row.specHash, launch: null, origin: 'api' });
    expect((await detail(store, again.result.id)).launch).toEqual({ name: null, envs: {} });
  });

  it('keeps each job its own launch overrides and origin when submits go in one batched statement', async () => {
    // More concurrent submits than SUBMIT_IN_FLIGHT: the later ones share a statement (insertMany).
    const outs = await Promise.all(Array.from({ length: 8 }, (_, i) => submit(store, { source: { kind: 'yaml', text: TRAINING }, name: `batch-${i}`, envs: { EPOCHS: String(i) }, origin: i % 2 ? 'cli' : 'dashboard' })));
    // Concurrent statements take ids in no fixed order: match each job by its name.
    const rows = await db.job.findMany({ where: { id: { in: outs.map((o) => o.result.id) } }, orderBy: { name: 'asc' } });
    expect(rows.map((r) => [r.name, r.launch, r.origin])).toEqual(Array.from({ length: 8 }, (_, i) => [`batch-${i}`, { name: `batch-${i}`, envs: { EPOCHS: String(i) } }, i % 2 ? 'cli' : 'dashboard']));
  });

  it('answers 404 for an unknown job and 400 naming the field for a bad origin', async () => {
    expect((await apiError(rerun(store, 999_999, 'api'))).status).toBe(404);
    const bad = await apiError(parseRerunRequest(jsonRequest('/api/jobs/1/rerun', { origin: 'robot' })));
    expect(bad.status).toBe(400);
    expect(bad.detail).toContain('origin');
    expect((await apiError(parseRerunRequest(jsonRequest('/api/jobs/1/rerun', { origin: 'cli', extra: 1 })))).status).toBe(400);
    expect(await parseRerunRequest(new Request('http://x/api/jobs/1/rerun', { method: 'POST' }))).toEqual({ origin: 'api', overrides: {} });
    const badSubmit = await apiError(parseSubmitRequest(jsonRequest('/api/jobs', { cmd: 'true', origin: 'x'.repeat(500) })));
    expect(badSubmit.status).toBe(400);
    expect(badSubmit.detail).toMatch(/^request body: origin: origin must be one of cli, api, dashboard/);
  });
});
