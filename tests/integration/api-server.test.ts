/**
 * The job API against a real server process (tests/helpers/server.ts), on PGlite and on
 * PostgreSQL: each kind of bad input answers the right status with a problem+json message that
 * says what and where; idempotent submits (same spec 200, different 409, 20 concurrent → one
 * job); list filters and cursor paging across 3 pages; the detail shape checked against the
 * server's own OpenAPI document; cancel and delete rules.
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=.next-api npx next build` (global setup builds when
 * missing).
 */
import Ajv2020 from 'ajv/dist/2020';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useServerDatabase } from '../helpers/use-database';
import type { ServerProcess } from '../helpers/server';

type Json = Record<string, any>;

const TERMINAL = new Set(['SUCCEEDED', 'CANCELLED', 'FAILED', 'FAILED_SETUP', 'FAILED_PRECHECKS', 'FAILED_NO_RESOURCE', 'FAILED_CONTROLLER']);

describe.each(DB_KINDS)('job API over HTTP (%s)', (kind) => {
  let server: ServerProcess;
  const database = useServerDatabase(kind, 'api-server');
  let openapi: Json;
  let ajv: Ajv2020;
  const live: number[] = [];

  const api = (p: string, init?: RequestInit) => server.api(p, init);
  const postYaml = (text: string, query = '') => api(`/api/jobs${query}`, { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: text });
  const postJson = (p: string, body: unknown) => api(p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  /** Reads a problem answer and checks its envelope. */
  async function problem(res: Response, status: number): Promise<Json> {
    const text = await res.text();
    expect(res.status, text).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = JSON.parse(text);
    expect(body).toMatchObject({ status, title: expect.any(String), detail: expect.any(String) });
    return body;
  }

  function conforms(component: string, value: unknown) {
    const validate = ajv.getSchema(`doc#/components/schemas/${component}`) ?? ajv.compile({ $ref: `doc#/components/schemas/${component}` });
    const ok = validate(value);
    expect(ok, `${component}: ${JSON.stringify(validate.errors)}`).toBe(true);
  }

  async function waitTerminal(id: number, timeoutMs = 30_000): Promise<Json> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const job = await (await api(`/api/jobs/${id}`)).json();
      if (TERMINAL.has(job.status)) return job;
      if (Date.now() > until) throw new Error(`job ${id} still ${job.status} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  beforeAll(async () => {
    server = await database.start();
    const res = await api('/api/openapi.json');
    expect(res.status).toBe(200);
    openapi = await res.json();
    ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addFormat('date-time', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    ajv.addSchema({ $id: 'doc', components: openapi.components });
  });

  afterAll(async () => {
    // Leave no attempt running after the server is gone.
    if (server && live.length) await postJson('/api/jobs/cancel', { ids: live }).catch(() => undefined);
  });

  it('answers a YAML error with 400, the line and key path of each issue, and a formatted detail', async () => {
    const res = await postYaml('name: bad\nrun: echo hi\nresources:\n  cpus: lots\n', '?filename=bad.yaml');
    const body = await problem(res, 400);
    expect(body.title).toBe('Invalid job spec');
    expect(body.issues[0]).toMatchObject({ file: 'bad.yaml', line: 4, path: expect.stringContaining('resources.cpus') });
    expect(body.detail).toMatch(/^bad\.yaml:4 /);
    conforms('Problem', body);
    const syntax = await problem(await postJson('/api/jobs', { yaml: 'name: a\n\trun: x\n', filename: 'tabs.yaml' }), 400);
    expect(syntax.issues[0]).toMatchObject({ file: 'tabs.yaml', line: 2 });
    expect(syntax.detail).toMatch(/^tabs\.yaml:2 .*indented with a tab/);
    const twice = await problem(await postYaml('name: a\nrun: x\nrun: y\n'), 400);
    expect(twice.issues[0]).toMatchObject({ file: 'job.yaml', line: 3, path: 'task[0].run' });
  });

  it('answers unknown jobs with 404 and bad ids with 400', async () => {
    expect((await problem(await api('/api/jobs/987654'), 404)).detail).toBe('job 987654 not found');
    expect((await problem(await api('/api/jobs/abc'), 400)).detail).toBe('job id must be a positive integer, got "abc"');
    expect((await problem(await api('/api/jobs/987654/cancel', { method: 'POST' }), 404)).detail).toBe('job 987654 not found');
    expect((await problem(await api('/api/jobs/987654', { method: 'DELETE' }), 404)).detail).toBe('job 987654 not found');
    await problem(await api('/api/jobs/0/cancel', { method: 'POST' }), 400);
  });

  it('answers wrong content types with 415, invalid JSON with 400 and its position, oversized bodies with 413', async () => {
    const form = await problem(await api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'run=echo' }), 415);
    expect(form.detail).toContain('application/yaml');
    await problem(await api('/api/jobs/cancel', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' }), 415);
    const bad = await problem(await api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{\n  "cmd": "echo",\n  "name": }' }), 400);
    expect(bad.detail).toMatch(/^invalid JSON in the request body at line 3, column 11/);
    const typo = await problem(await postJson('/api/jobs', { cmd: 'echo', submission_id: 'x' }), 400);
    expect(typo.detail).toContain('submission_id');
    await problem(await postYaml(`run: echo ${'x'.repeat(1024 * 1024)}\n`), 413);
  });

  it('answers a bad cursor, status or limit with 400', async () => {
    expect((await problem(await api('/api/jobs?cursor=not-a-cursor!'), 400)).detail).toMatch(/cursor .* is malformed/);
    const status = await problem(await api('/api/jobs?status=BOGUS'), 400);
    expect(status.detail).toContain('unknown status "BOGUS"; valid statuses: PENDING, STARTING');
    await problem(await api('/api/jobs?limit=500'), 400);
  });

  it('refuses an empty bulk-cancel filter', async () => {
    const body = await problem(await postJson('/api/jobs/cancel', {}), 400);
    expect(body.detail).toContain('refusing to cancel every job without an explicit filter');
  });

  it('makes submissionId idempotent: same spec 200, different spec 409, 20 concurrent → one job', async () => {
    const first = await postJson('/api/jobs', { cmd: 'echo idem', submissionId: `idem-${kind}` });
    expect(first.status).toBe(201);
    const created = await first.json();
    conforms('SubmitResult', created);
    expect(first.headers.get('location')).toBe(`/api/jobs/${created.id}`);
    const again = await postJson('/api/jobs', { cmd: 'echo idem', submissionId: `idem-${kind}` });
    expect(again.status).toBe(200);
    expect((await again.json()).id).toBe(created.id);
    const other = await problem(await postJson('/api/jobs', { cmd: 'echo other', submissionId: `idem-${kind}` }), 409);
    expect(other.detail).toContain(`job ${created.id}`);

    const answers = await Promise.all(Array.from({ length: 20 }, () => postYaml('name: race\nrun: echo race\n', `?submissionId=race-${kind}`)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    const ids = new Set(await Promise.all(answers.map(async (r) => (await r.json()).id)));
    expect(ids.size).toBe(1);
    const listed = await (await api('/api/jobs?q=race&limit=200')).json();
    expect(listed.jobs.filter((j: Json) => j.name === 'race')).toHaveLength(1);
  });

  it('filters and pages the list with a cursor across 3 pages', async () => {
    const prefix = `page-${kind}-${Date.now()}`;
    const ids: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await postJson('/api/jobs', { cmd: `echo ${i}`, name: `${prefix}-${i}` });
      expect(res.status).toBe(201);
      ids.push((await res.json()).id);
    }
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: Response = await api(`/api/jobs?q=${prefix.toUpperCase()}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      const page = await res.json();
      conforms('JobList', page);
      seen.push(...page.jobs.map((j: Json) => j.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
    const byId = await (await api(`/api/jobs?q=${ids[2]}`)).json();
    expect(byId.jobs.map((j: Json) => j.id)).toContain(ids[2]);
    const filtered = await (await api(`/api/jobs?q=${prefix}&status=FAILED,FAILED_SETUP`)).json();
    expect(filtered.jobs).toEqual([]);
  });

  it('answers the detail in the documented shape, with secrets masked', async () => {
    const yaml = 'name: detail\nenvs:\n  API_TOKEN: s3cr3t-value\n  MODE: fast\nrun: echo "$MODE"\n';
    const res = await postYaml(yaml);
    expect(res.status).toBe(201);
    const { id } = await res.json();
    const d = await (await api(`/api/jobs/${id}`)).json();
    conforms('JobDetail', d);
    expect(d).toMatchObject({ id, name: 'detail', taskCount: 1, executor: 'local' });
    expect(d.tasks[0].envs).toEqual({ API_TOKEN: '••••••', MODE: 'fast' });
    expect(JSON.stringify(d)).not.toContain('s3cr3t-value');
    expect(d.specYaml).toContain('MODE: fast');
    expect(d.events[0]).toMatchObject({ entity: 'job', to: 'PENDING' });
  });

  it('validates YAML for the editor without saving', async () => {
    const before = (await (await api('/api/jobs?limit=200')).json()).jobs.length;
    const ok = await (await api('/api/validate', { method: 'POST', headers: { 'content-type': 'text/yaml' }, body: 'run: echo\n' })).json();
    conforms('ValidateResult', ok);
    expect(ok).toEqual({ ok: true, issues: [], warnings: [], required: [] });
    const bad = await (await api('/api/validate', { method: 'POST', headers: { 'content-type': 'text/yaml' }, body: 'run: echo\nnum_nodes: 4\n' })).json();
    conforms('ValidateResult', bad);
    expect(bad.ok).toBe(false);
    expect(bad.issues[0]).toMatchObject({ line: 2, path: expect.stringContaining('num_nodes') });
    expect((await (await api('/api/jobs?limit=200')).json()).jobs.length).toBe(before);
  });

  it('refuses to delete a job that is not terminal, cancels it, then refuses a second cancel and deletes it', async () => {
    const res = await postJson('/api/jobs', { cmd: 'sleep 60', name: 'long' });
    const { id } = await res.json();
    live.push(id);
    const refused = await problem(await api(`/api/jobs/${id}`, { method: 'DELETE' }), 409);
    expect(refused.detail).toMatch(new RegExp(`^job ${id} is [A-Z_]+: cancel it first`));

    const cancel = await api(`/api/jobs/${id}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(200);
    const result = await cancel.json();
    conforms('CancelResult', result);
    expect([...result.cancelled, ...result.cancelling]).toEqual([id]);
    const ended = await waitTerminal(id);
    expect(ended.status).toBe('CANCELLED');

    const again = await problem(await api(`/api/jobs/${id}/cancel`, { method: 'POST' }), 409);
    expect(again.detail).toBe(`job ${id} is already CANCELLED`);
    const bulk = await (await postJson('/api/jobs/cancel', { ids: [id, 987654] })).json();
    expect(bulk).toEqual({ cancelled: [], cancelling: [], alreadyTerminal: [{ id, status: 'CANCELLED' }], notFound: [987654] });

    const del = await api(`/api/jobs/${id}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    await problem(await api(`/api/jobs/${id}`), 404);
  });

  it('cancels by filter: only jobs that match and are not terminal', async () => {
    const name = `bulk-${kind}-${Date.now()}`;
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await (await postJson('/api/jobs', { cmd: 'sleep 60', name })).json()).id);
    live.push(...ids);
    const r = await (await postJson('/api/jobs/cancel', { q: name })).json();
    conforms('CancelResult', r);
    expect([...r.cancelled, ...r.cancelling].sort()).toEqual([...ids].sort());
    expect(r.alreadyTerminal).toEqual([]);
    for (const id of ids) expect((await waitTerminal(id)).status).toBe('CANCELLED');
    const none = await (await postJson('/api/jobs/cancel', { q: name })).json();
    expect(none).toEqual({ cancelled: [], cancelling: [], alreadyTerminal: [], notFound: [] });
  });
});
