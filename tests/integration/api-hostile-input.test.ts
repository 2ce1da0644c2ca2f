/**
 * Hostile input through the job API's lib layer (lib/api/request.ts → lib/api/jobs.ts → the
 * store), against both databases: a substring search is a substring search (`%`, `_` and `\`
 * match themselves — in the list and in a bulk cancel by filter), and every input the database
 * cannot hold (out-of-range integers, NUL, lone surrogates) or the spec refuses (relative
 * workdir, invisible characters in names) is a 400 that names the field — never a 500 from the
 * database — with /api/validate and submit agreeing.
 */
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, DB_KINDS, type TestDatabase } from '../helpers/db';
import { ApiError } from '../../lib/api/errors';
import { cancelMany, list, submit, validateSpec } from '../../lib/api/jobs';
import { getLogRange, logDownloadResponse, parseLogDownloadQuery, parseLogRangeQuery } from '../../lib/api/logs';
import { parseCancelRequest, parseListQuery, parseSubmitRequest, parseValidateRequest } from '../../lib/api/request';
import { unstorableAt } from '../../lib/jobs/spec';
import { createStore, type Store } from '../../lib/store';
import { parseStreamStart, StreamQueryError } from '../../lib/ws/stream-start';

/** What a route answers for an error: the ApiError's status and text, or 500 for anything else. */
async function answer(p: () => unknown): Promise<{ status: number; text: string }> {
  try {
    await p();
  } catch (err) {
    if (err instanceof ApiError) return { status: err.status, text: `${err.detail} ${JSON.stringify(err.extra)}` };
    return { status: 500, text: String(err) };
  }
  return { status: 200, text: '' };
}

const jsonPost = (url: string, body: unknown) => new Request(`http://x${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe.each(DB_KINDS)('hostile input on %s', (kind) => {
  let t: TestDatabase;
  let store: Store;
  beforeAll(async () => {
    t = await createTestDatabase(kind, `api-hostile-${kind}`);
    store = createStore(t.db.prisma);
  });
  afterAll(async () => {
    await t?.dispose();
  });

  describe('q is a substring, not a LIKE pattern', () => {
    const names = ['wild_1', 'wildX1', 'wild-1', '100%real', '100-real', 'back\\slash', 'backXslash'];
    const ids = new Map<string, number>();
    beforeAll(async () => {
      for (const name of names) ids.set(name, (await submit(store, { source: { kind: 'cmd', cmd: 'true' }, name })).result.id);
    });
    const listed = async (q: string) => (await list(store, parseListQuery(new URL(`http://x/api/jobs?q=${encodeURIComponent(q)}&limit=200`)))).jobs.map((j) => j.name).sort();

    it('the list matches %, _ and \\ literally (case-insensitively)', async () => {
      expect(await listed('wild_1')).toEqual(['wild_1']);
      expect(await listed('WILD_')).toEqual(['wild_1']);
      expect(await listed('100%real')).toEqual(['100%real']);
      expect(await listed('%')).toEqual(['100%real']);
      expect(await listed('\\')).toEqual(['back\\slash']);
      expect(await listed('k\\s')).toEqual(['back\\slash']);
      expect(await listed('wild')).toEqual(['wild-1', 'wildX1', 'wild_1']);
    });

    it('a bulk cancel by q cancels only the literal matches', async () => {
      const r1 = await cancelMany(store, await parseCancelRequest(jsonPost('/api/jobs/cancel', { q: 'wild_1' })));
      expect(r1.cancelled).toEqual([ids.get('wild_1')]);
      const r2 = await cancelMany(store, await parseCancelRequest(jsonPost('/api/jobs/cancel', { q: '100%real' })));
      expect(r2.cancelled).toEqual([ids.get('100%real')]);
      const r3 = await cancelMany(store, await parseCancelRequest(jsonPost('/api/jobs/cancel', { q: '_' })));
      expect(r3.cancelled).toEqual([]);
      const left = await t.db.prisma.job.findMany({ where: { id: { in: [...ids.values()] }, status: 'PENDING' }, select: { name: true } });
      expect(left.map((j) => j.name).sort()).toEqual(['100-real', 'back\\slash', 'backXslash', 'wild-1', 'wildX1'].sort());
    });
  });

  describe('what the database cannot hold is a 400 naming the field', () => {
    let jobId: number;
    beforeAll(async () => {
      jobId = (await submit(store, { source: { kind: 'cmd', cmd: 'true' }, name: 'logs-target' })).result.id;
    });

    it.each(['task=2147483648', 'attempt=2147483648', 'task=999999999999999', 'attempt=999999999999999'])('logs ?%s', async (query) => {
      const param = query.split('=')[0];
      const range = await answer(() => getLogRange(store, jobId, parseLogRangeQuery(new URL(`http://x/api/jobs/${jobId}/logs?${query}`))));
      expect(range.status).toBe(400);
      expect(range.text).toContain(param);
      const download = await answer(() => logDownloadResponse(store, jobId, parseLogDownloadQuery(new URL(`http://x/api/jobs/${jobId}/logs/download?${query}`))));
      expect(download.status).toBe(400);
      expect(download.text).toContain(param);
    });

    it.each(['task', 'attempt', 'since', 'rank'])('/ws/jobs/:id ?%s=2147483648 is refused naming it', (param) => {
      expect(() => parseStreamStart(new URLSearchParams(`${param}=2147483648`))).toThrow(StreamQueryError);
      expect(() => parseStreamStart(new URLSearchParams(`${param}=2147483648`))).toThrow(param);
      expect(parseStreamStart(new URLSearchParams(`${param}=2147483647`))).toBeTruthy();
    });

    /** As they appear in a client's JSON text (JSON.stringify writes a lone surrogate so too). */
    const BAD = { nul: 'a\\u0000b', surrogate: 'a\\ud800b', lowSurrogate: '\\udc00' } as const;
    /** Where a hostile string goes in a body, replaced in the JSON text. */
    const MARK = 'XBADX';
    const withBad = (value: unknown, bad: string) => JSON.stringify(value).replaceAll(MARK, bad);
    const bodies: Array<[string, (bad: string) => unknown]> = [
      ['metadata', (bad) => ({ cmd: 'true', metadata: { note: bad } })],
      ['metadata', (bad) => ({ cmd: 'true', metadata: { [bad]: 1 } })],
      ['metadata', (bad) => ({ cmd: 'true', metadata: { deep: [{ x: bad }] } })],
      ['name', (bad) => ({ cmd: 'true', name: bad })],
      ['run', (bad) => ({ cmd: `echo ${bad}` })],
      ['envs', (bad) => ({ cmd: 'true', envs: { A: bad } })],
      ['envs', (bad) => ({ spec: { run: 'true', envs: { A: bad } } })],
      ['run', (bad) => ({ spec: { run: `echo ${bad}` } })],
      ['workdir', (bad) => ({ spec: { run: 'true', workdir: `/tmp/${bad}` } })],
      ['resources', (bad) => ({ spec: { run: 'true', resources: { cloud: bad } } })],
      ['job.yaml:1', (bad) => ({ yaml: `run: echo ${bad}\n` })],
      ['job.yaml:2', (bad) => ({ yaml: `run: echo hi\n# ${bad}\n` })],
      ['filename', (bad) => ({ cmd: 'true', filename: bad })],
    ];
    it.each(Object.entries(BAD))('POST /api/jobs with %s in each field → 400 naming it, nothing stored', async (_label, bad) => {
      const before = await t.db.prisma.job.count();
      for (const [field, body] of bodies) {
        const text = withBad(body(MARK), bad);
        const req = new Request('http://x/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
        const r = await answer(async () => submit(store, await parseSubmitRequest(req)));
        expect({ field, status: r.status }).toEqual({ field, status: 400 });
        expect(r.text).toContain(field);
      }
      expect(await t.db.prisma.job.count()).toBe(before);
    });

    it('metadata is held to the plain-value limits: nested deeper than 32 levels → 400 naming metadata', async () => {
      let deep: unknown = 'leaf';
      for (let i = 0; i < 40; i++) deep = { d: deep };
      const r = await answer(async () => submit(store, await parseSubmitRequest(jsonPost('/api/jobs', { cmd: 'true', metadata: { deep } }))));
      expect(r.status).toBe(400);
      expect(r.text).toMatch(/metadata.*nests maps\/lists deeper than 32 levels/);
    });

    it('a NUL in ?q= and NUL or a lone surrogate in a bulk cancel q → 400 naming q', async () => {
      const l = await answer(async () => list(store, parseListQuery(new URL('http://x/api/jobs?q=a%00b'))));
      expect(l.status).toBe(400);
      expect(l.text).toContain('q');
      for (const bad of Object.values(BAD)) {
        const req = new Request('http://x/api/jobs/cancel', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"q":"${bad}"}` });
        const c = await answer(async () => cancelMany(store, await parseCancelRequest(req)));
        expect(c.status).toBe(400);
        expect(c.text).toContain('q');
      }
    });

    it('a long command of characters outside the BMP is stored as sent, as one job and as an array', async () => {
      // A control character (the YAML is double-quoted) and more characters outside the BMP
      // (surrogate pairs) than a YAML line holds: the stored YAML once folded the line inside a
      // pair — a 500 from jsonb for an array, U+FFFD in place of the character for one job.
      const cmd = `echo \b${'😀'.repeat(60)} 𵨡`;
      for (const extra of [{}, { numJobs: 2 }, { params: {} }]) {
        const r = await answer(async () => submit(store, await parseSubmitRequest(jsonPost('/api/jobs', { cmd, ...extra }))));
        expect({ extra, status: r.status, text: r.text }).toEqual({ extra, status: 200, text: '' });
      }
      const rows = await t.db.prisma.job.findMany({ where: { specYaml: { contains: '😀' } }, select: { specYaml: true, spec: true } });
      expect(rows.length).toBe(4);
      for (const row of rows) {
        expect(unstorableAt(row.specYaml)).toBeNull();
        expect(row.specYaml).not.toContain('\ufffd');
        expect((parseYaml(row.specYaml) as { run: string }).run).toBe(cmd);
      }
    });

    it('/api/validate and submit agree on every hostile YAML', async () => {
      const yamls = [`run: echo ${MARK}`, `name: x${MARK}\nrun: echo hi`, `run: echo hi # ${MARK}`, `envs:\n  A: "${MARK}"\nrun: echo`, `name: p\n---\nname: t${MARK}\nrun: echo`];
      // YAML's own escapes make the same characters from plain text.
      const bodies = [...Object.values(BAD).flatMap((bad) => yamls.map((y) => withBad({ yaml: y }, bad))), JSON.stringify({ yaml: 'run: "echo \\0"' }), JSON.stringify({ yaml: 'run: "echo \\ud800"' })];
      for (const body of bodies) {
        const y = body;
        const v = await answer(async () => {
          const p = await parseValidateRequest(new Request('http://x/api/validate', { method: 'POST', headers: { 'content-type': 'application/json' }, body }));
          const out = validateSpec(p.text, p.filename);
          if (!out.ok) throw new ApiError(400, 'Invalid job spec', out.issues.map((i) => i.message).join('; '));
        });
        const s = await answer(async () => submit(store, await parseSubmitRequest(new Request('http://x/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body }))));
        expect({ y, validate: v.status, submit: s.status }).toEqual({ y, validate: 400, submit: 400 });
      }
    });
  });
});
