/**
 * Request parsing of the job API (lib/api/request.ts, lib/api/body.ts), cursors
 * (lib/api/cursor.ts) and YAML masking (lib/api/mask.ts): every kind of bad input gets the
 * right status and a message that says what and where.
 */
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { readBody } from '../../lib/api/body';
import { ApiError } from '../../lib/api/errors';
import { maskSpecYaml, UNMASKABLE_SPEC } from '../../lib/api/mask';
import {
  bodyKind,
  jsonErrorOffset,
  lineColumn,
  parseCancelRequest,
  parseJobId,
  parseJson,
  parseListQuery,
  parseSubmitRequest,
  parseValidateRequest,
} from '../../lib/api/request';
import { MASKED_VALUE } from '../../lib/auth/secrets';
import { decodeCursor, encodeCursor } from '../../lib/api/cursor';
import { JOB_STATUSES } from '../../lib/jobs/status';
import { unstorableAt } from '../../lib/jobs/spec/text';

async function apiError(f: () => unknown): Promise<ApiError> {
  try {
    await f();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

const post = (body: BodyInit | null, type?: string, url = 'http://x/api/jobs') =>
  new Request(url, { method: 'POST', headers: type ? { 'content-type': type } : {}, body, duplex: 'half' } as RequestInit);

describe('JSON errors say where', () => {
  it.each([
    ['{"a":}', 1, 6],
    ['{"a":1', 1, 7],
    ['{a:1}', 1, 2],
    ['[1,2,]', 1, 6],
    ['{"a":1}x', 1, 8],
    ['{\n  "yaml": "x",\n  "name": tru\n}', 3, 14],
    ['"\\x"', 1, 3],
    ['{"a": "b\nc"}', 1, 9],
    ['01', 1, 2],
  ])('%j → line %i, column %i', (text, line, column) => {
    const err = (() => {
      try {
        parseJson(text);
      } catch (e) {
        return e as ApiError;
      }
      throw new Error('parsed');
    })();
    expect(err.status).toBe(400);
    expect(err.detail).toMatch(new RegExp(`^invalid JSON in the request body at line ${line}, column ${column} \\(position \\d+\\): .+`));
    expect(err.extra).toMatchObject({ line, column });
  });

  it('scans valid JSON to its end and counts lines from 1', () => {
    const valid = '{"a":[1,2.5e3,true,null,"\\u00e9"]}';
    expect(jsonErrorOffset(valid)).toBe(valid.length);
    expect(lineColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
  });

  it('refuses an empty body', () => {
    expect(() => parseJson('  ')).toThrow(/empty/);
  });
});

describe('content types and bodies', () => {
  it('accepts YAML and JSON media types, with parameters, and refuses others with 415', async () => {
    expect(bodyKind(post('x', 'application/yaml'))).toBe('yaml');
    expect(bodyKind(post('x', 'text/plain;charset=UTF-8'))).toBe('yaml');
    expect(bodyKind(post('x', 'TEXT/YAML'))).toBe('yaml');
    expect(bodyKind(post('x', 'application/json; charset=utf-8'))).toBe('json');
    const form = await apiError(() => bodyKind(post('x', 'application/x-www-form-urlencoded')));
    expect(form.status).toBe(415);
    expect(form.detail).toContain('application/x-www-form-urlencoded');
    expect(form.detail).toContain('application/yaml');
    const none = await apiError(() => bodyKind(new Request('http://x', { method: 'POST' })));
    expect(none.status).toBe(415);
    expect(none.detail).toContain('missing');
    expect((await apiError(() => bodyKind(post('x', 'text/plain'), ['json']))).status).toBe(415);
  });

  it('caps a streamed body at the limit (413) and refuses invalid UTF-8 (400)', async () => {
    const chunks = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 10; i++) c.enqueue(new Uint8Array(1000));
        c.close();
      },
    });
    const big = await apiError(() => readBody(post(chunks, 'text/plain'), 4096));
    expect(big.status).toBe(413);
    expect(big.detail).toContain('4096');
    const declared = new Request('http://x', { method: 'POST', body: 'x'.repeat(10), headers: { 'content-length': '99999999' } });
    expect((await apiError(() => readBody(declared, 4096))).status).toBe(413);
    expect((await apiError(() => readBody(post(new Uint8Array([0xff, 0xfe]), 'text/plain')))).detail).toContain('UTF-8');
    expect(await readBody(post('héllo', 'text/plain'))).toBe('héllo');
  });
});

describe('job ids', () => {
  it.each(['abc', '0', '-1', '1.5', '1e3', '99999999999', ''])('refuses %j with 400', async (raw) => {
    const err = await apiError(() => parseJobId(raw));
    expect(err.status).toBe(400);
    expect(err.detail).toMatch(/job id must be/);
  });
  it('parses a positive integer', () => {
    expect(parseJobId('42')).toBe(42);
  });
  it('names the bad id', async () => {
    expect((await apiError(() => parseJobId('abc'))).detail).toBe('job id must be a positive integer, got "abc"');
  });
});

describe('list query', () => {
  const q = (s: string) => parseListQuery(new URL(`http://x/api/jobs${s}`));
  it('defaults and normalizes', () => {
    expect(q('')).toEqual({ status: undefined, q: undefined, limit: 50, beforeId: null, afterName: null, sort: 'newest', foldGroups: false });
    expect(q('?status=running,pending&status=Failed&limit=200&q=%20abc%20')).toEqual({ status: ['RUNNING', 'PENDING', 'FAILED'], q: 'abc', limit: 200, beforeId: null, afterName: null, sort: 'newest', foldGroups: false });
    expect(q(`?cursor=${encodeCursor(1234)}`).beforeId).toBe(1234);
  });
  it('refuses an unknown status, listing the valid ones', async () => {
    const err = await apiError(() => q('?status=RUNNING&status=BOGUS'));
    expect(err.status).toBe(400);
    expect(err.detail).toContain('unknown status "BOGUS"');
    for (const s of JOB_STATUSES) expect(err.detail).toContain(s);
    expect(err.extra.issues).toEqual([expect.objectContaining({ path: 'status[1]' })]);
  });
  it.each(['0', '201', 'abc', '2.5', '-3'])('refuses limit=%s', async (limit) => {
    const err = await apiError(() => q(`?limit=${limit}`));
    expect(err.status).toBe(400);
    expect(err.detail).toContain('limit must be an integer between 1 and 200');
  });
  it.each(['!!!', Buffer.from('abc').toString('base64url'), Buffer.from('0').toString('base64url'), Buffer.from('-5').toString('base64url'), Buffer.from('99999999999').toString('base64url'), 'MTIz=', ` ${encodeCursor(12)}`])(
    'refuses the malformed cursor %j',
    async (cursor) => {
      const err = await apiError(() => q(`?cursor=${encodeURIComponent(cursor)}`));
      expect(err.status).toBe(400);
      expect(err.detail).toMatch(/cursor .* is malformed/);
    },
  );
  it('round-trips cursors', () => {
    for (const id of [1, 9, 10, 12345, 2_147_483_647]) expect(decodeCursor(encodeCursor(id))).toBe(id);
    expect(decodeCursor(encodeCursor(2_147_483_648))).toBeNull();
  });
});

describe('submit and validate bodies', () => {
  it('takes a YAML body with query overrides', async () => {
    const input = await parseSubmitRequest(post('run: echo\n', 'application/yaml', 'http://x/api/jobs?name=n&submissionId=s-1&filename=a.yaml'));
    expect(input).toEqual({ source: { kind: 'yaml', text: 'run: echo\n', filename: 'a.yaml' }, name: 'n', submissionId: 's-1' });
  });
  it('takes a JSON body with exactly one of yaml, spec, cmd', async () => {
    const input = await parseSubmitRequest(post(JSON.stringify({ cmd: 'echo', envs: { A: 'b' }, submissionId: 'k' }), 'application/json'));
    expect(input).toMatchObject({ source: { kind: 'cmd', cmd: 'echo' }, envs: { A: 'b' }, submissionId: 'k' });
    const none = await apiError(() => parseSubmitRequest(post('{"name":"x"}', 'application/json')));
    expect(none.detail).toContain('give one of yaml, spec or cmd');
    const two = await apiError(() => parseSubmitRequest(post('{"yaml":"run: a","cmd":"b"}', 'application/json')));
    expect(two.detail).toContain('not yaml and cmd');
  });
  it('names unknown keys and wrong types with their path', async () => {
    const typo = await apiError(() => parseSubmitRequest(post('{"cmd":"x","submission_id":"k"}', 'application/json')));
    expect(typo.status).toBe(400);
    expect(typo.detail).toContain('submission_id');
    const env = await apiError(() => parseSubmitRequest(post('{"cmd":"x","envs":{"A":1}}', 'application/json')));
    expect(env.detail).toMatch(/^request body: envs\.A: /);
    const badId = await apiError(() => parseSubmitRequest(post('{"cmd":"x","submissionId":"has space"}', 'application/json')));
    expect(badId.detail).toContain('submissionId');
  });
  it('validate takes YAML or {yaml}', async () => {
    expect(await parseValidateRequest(post('run: x', 'text/yaml', 'http://x/api/validate?filename=f.yaml'))).toEqual({ text: 'run: x', filename: 'f.yaml' });
    expect(await parseValidateRequest(post('{"yaml":"run: y"}', 'application/json'))).toEqual({ text: 'run: y', filename: undefined });
  });
});

describe('bulk cancel bodies', () => {
  const cancel = (body: unknown, type = 'application/json') => parseCancelRequest(post(typeof body === 'string' ? body : JSON.stringify(body), type, 'http://x/api/jobs/cancel'));
  it('refuses an empty filter', async () => {
    for (const body of [{}, { status: undefined }]) {
      const err = await apiError(() => cancel(body));
      expect(err.status).toBe(400);
      expect(err.detail).toContain('refusing to cancel every job without an explicit filter');
    }
  });
  it('refuses empty ids, ids with a filter, all:false, bad statuses, unknown keys, non-JSON', async () => {
    expect((await apiError(() => cancel({ ids: [] }))).detail).toContain('at least one job id');
    expect((await apiError(() => cancel({ ids: [1], all: true }))).detail).toContain('not both');
    expect((await apiError(() => cancel({ all: false }))).status).toBe(400);
    expect((await apiError(() => cancel({ status: ['NOPE'] }))).detail).toContain('unknown status "NOPE"');
    expect((await apiError(() => cancel({ id: 3 }))).detail).toContain('"id"');
    expect((await apiError(() => cancel({ ids: [0] }))).detail).toContain('ids[0]');
    expect((await apiError(() => cancel('ids=1', 'application/x-www-form-urlencoded'))).status).toBe(415);
  });
  it('parses ids (deduplicated) and filters', async () => {
    expect(await cancel({ ids: [3, 1, 3] })).toEqual({ ids: [3, 1] });
    expect(await cancel({ all: true })).toEqual({ filter: { status: undefined, q: undefined } });
    expect(await cancel({ status: ['RUNNING'], q: 'train' })).toEqual({ filter: { status: ['RUNNING'], q: 'train' } });
  });
});

describe('maskSpecYaml', () => {
  it('keeps a long line of characters outside the BMP whole (no line folding inside a surrogate pair)', () => {
    const run = `echo \b${'😀'.repeat(60)}`;
    const out = maskSpecYaml(`envs:\n  API_TOKEN: abc\nrun: ${JSON.stringify(run)}\n`);
    expect(out).not.toContain('abc');
    expect(unstorableAt(out)).toBeNull();
    expect((parseYaml(out) as { run: string }).run).toBe(run);
  });

  it('masks secret-looking env values in every document, through aliases and merges, keeping the rest', () => {
    const text = `# comment kept
name: x
envs:
  GITHUB_TOKEN: ghp_abc # trailing
  EPOCHS: 3
  DB: postgresql://u:hunter2@h/db
---
common: &c
  API_KEY: "k1"
envs:
  <<: *c
  PASSWORD: p
---
x: &d {SECRET: s}
envs: *d
run: echo $SECRET
`;
    const out = maskSpecYaml(text);
    for (const secret of ['ghp_abc', 'hunter2', 'k1', ': p\n', ': s}']) expect(out).not.toContain(secret);
    expect(out).toContain('# comment kept');
    expect(out).toContain('# trailing');
    expect(out).toContain('EPOCHS: 3');
    expect(out).toContain(`GITHUB_TOKEN: ${MASKED_VALUE}`);
    expect(out).toContain('run: echo $SECRET');
    expect(out.split('\n---\n')).toHaveLength(3);
  });
  it('masks every value of secrets, whatever its name (numbers too), and leaves a required one empty', () => {
    const out = maskSpecYaml('secrets:\n  PLAIN_NAME: visible-elsewhere # c\n  N: 42\n  LATER:\nenvs:\n  EPOCHS: 3\nrun: x\n');
    expect(out).toBe(`secrets:\n  PLAIN_NAME: ${MASKED_VALUE} # c\n  N: ${MASKED_VALUE}\n  LATER:\nenvs:\n  EPOCHS: 3\nrun: x\n`);
  });
  it('returns the text unchanged when nothing is secret, and never echoes unparsable text', () => {
    expect(maskSpecYaml('name: a\nenvs:\n  A: b\n')).toBe('name: a\nenvs:\n  A: b\n');
    expect(maskSpecYaml('envs: [TOKEN\n')).toBe(UNMASKABLE_SPEC);
  });
});
