/**
 * A generated fuzz pass over the HTTP API, driven by the server's own OpenAPI document (GET
 * /api/openapi.json): every operation, every path and query parameter and every field of every
 * JSON request body it describes (and the raw YAML bodies) gets hostile values — strings with
 * NUL, lone surrogates, bidi and invisible characters, LIKE wildcards, huge strings, huge,
 * negative and fractional numbers, wrong types, nested junk — and no answer may be a 5xx. A new
 * field or route is fuzzed as soon as the document lists it. Values come from fast-check with a
 * printed seed (`JOBDECK_FUZZ_SEED=<n>` replays a run; `JOBDECK_FUZZ_RUNS` sets the values per
 * field). One real server per database kind.
 *
 * Needs a built app: `JOBDECK_NEXT_DIST=<dir> npx next build`, and the same JOBDECK_NEXT_DIST.
 */
import fc from 'fast-check';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, DB_KINDS, type TestDatabase } from '../helpers/db';
import { startServerProcess, type ServerProcess } from '../helpers/server';

type Json = Record<string, unknown>;
type Schema = Json & { $ref?: string; type?: string | string[]; properties?: Record<string, Schema>; items?: Schema; enum?: unknown[]; const?: unknown; anyOf?: Schema[]; oneOf?: Schema[]; allOf?: Schema[] };

const SEED = Number(process.env.JOBDECK_FUZZ_SEED || Date.now() % 2_147_483_647);
const RUNS = Number(process.env.JOBDECK_FUZZ_RUNS || 12);
/** Generated values per body field also sent paired with each other field alone. */
const PAIRED = 3;

/** Strings that broke something once, or are known to be sharp: always sent. */
const SHARP_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\udc00\ud800',
  '\u202eevil',
  '\u200b',
  '\u3164',
  '\u115f',
  '\u{e0001}',
  '\ufeff',
  '%',
  '_',
  '\\',
  '%_\\',
  '../../../../etc/passwd',
  '/.//evil.example',
  '2147483648',
  '-1',
  '999999999999999999999',
  '1e309',
  'NaN',
  '{"a":1}',
  '<script>alert(1)</script>',
  'x'.repeat(5000),
];
const SHARP_NUMBERS = [0, -1, 1.5, 2147483647, 2147483648, -2147483649, Number.MAX_SAFE_INTEGER + 2, 1e308, -1e308, Number.MIN_VALUE];
const SHARP_OTHERS: unknown[] = [null, true, false, [], {}, [null], [[[]]], { '': null }, { __proto__: 1 }, Object.fromEntries([['__proto__', 'x']])];

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SHARP_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 200, maxLength: 3000 }) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...SHARP_STRINGS), fc.string({ unit: 'grapheme', maxLength: 10 })).map(([a, b]) => `${b}${a}${b}`) },
);
const hostileScalar: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 2, arbitrary: fc.oneof(fc.constantFrom(...SHARP_NUMBERS), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })) },
  { weight: 1, arbitrary: fc.constantFrom(...SHARP_OTHERS) },
);
/** Keys a task document knows, so junk reaches the spec's deeper checks too. */
const TASK_KEYS = ['run', 'setup', 'name', 'envs', 'workdir', 'resources', 'job_recovery', 'num_nodes', 'cpus', 'memory', 'infra', 'strategy', 'recover_on_exit_codes', 'max_restarts_on_errors'];
const hostileKey = fc.oneof(fc.constantFrom(...TASK_KEYS), hostileString);
const { tree: hostileValue } = fc.letrec<{ tree: unknown }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 3, arbitrary: hostileScalar },
    { weight: 1, arbitrary: fc.array(tie('tree'), { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.dictionary(hostileKey, tie('tree'), { maxKeys: 5 }) },
  ),
}));

/** Values for a parameter or field: the sharp ones, then generated ones. */
function valuesFor(arb: fc.Arbitrary<unknown>, salt: number): unknown[] {
  return [...SHARP_STRINGS, ...SHARP_NUMBERS, ...SHARP_OTHERS, ...fc.sample(arb, { numRuns: RUNS, seed: SEED + salt })];
}

/** Percent-encodes any string as its UTF-8 bytes (a lone surrogate becomes U+FFFD, as a browser sends it). */
function pct(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
  return [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0').toUpperCase()}`)).join('');
}
/** Raw query texts no encoder makes: broken escapes, a CESU-8 surrogate, overlong bytes. */
const RAW_QUERY_VALUES = ['%', '%zz', '%ED%A0%80', '%C0%80', '%FF%FE', '%00', '%E2%80%AE', '%F4%90%80%80'];

/** What a fuzz request carries besides its method and target. */
interface FuzzInit {
  headers?: Record<string, string>;
  body?: string;
}

interface Operation {
  method: string;
  path: string;
  params: Array<{ name: string; in: string; schema?: Schema }>;
  json?: Schema;
  yaml: boolean;
}

/** The HTTP operations of the document (not the `/ws/` entries: those are upgrades). */
function operations(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [p, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    if (p.startsWith('/ws/')) continue;
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const content = ((op.requestBody as Json | undefined)?.content ?? {}) as Record<string, { schema?: Schema }>;
      out.push({
        method: method.toUpperCase(),
        path: p,
        params: (op.parameters as Operation['params'] | undefined) ?? [],
        json: content['application/json']?.schema,
        yaml: Object.keys(content).some((c) => c.includes('yaml')),
      });
    }
  }
  return out;
}

/** Follows `$ref` and merges `allOf`, one level (what zod's JSON Schema output uses). */
function resolve(doc: Json, s: Schema | undefined): Schema {
  if (!s) return {};
  if (s.$ref) return resolve(doc, ((doc.components as Json).schemas as Record<string, Schema>)[s.$ref.split('/').pop()!]);
  if (s.allOf) return s.allOf.reduce<Schema>((acc, x) => ({ ...acc, ...resolve(doc, x), properties: { ...acc.properties, ...resolve(doc, x).properties } }), { ...s, allOf: undefined });
  return s;
}

/** A value the schema accepts, as plainly as possible (the other fields' value while one is fuzzed). */
function benign(doc: Json, s0: Schema | undefined): unknown {
  const s = resolve(doc, s0);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  const alt = s.anyOf ?? s.oneOf;
  if (alt) return benign(doc, alt.find((a) => resolve(doc, a).type !== 'null') ?? alt[0]);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'string') return 'true';
  if (type === 'integer' || type === 'number') return 1;
  if (type === 'boolean') return true;
  if (type === 'array') return [benign(doc, s.items)];
  if (type === 'object') return {};
  return 'true';
}

describe.each(DB_KINDS)('API fuzz from the OpenAPI document (%s)', (kind) => {
  let server: ServerProcess;
  let pg: TestDatabase | undefined;
  let doc: Json;
  let jobId = 1;
  const failures: string[] = [];
  let sent = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  beforeAll(async () => {
    const env: Record<string, string> = {};
    if (kind === 'postgresql') {
      pg = await createTestDatabase('postgresql', 'api-fuzz');
      env.DATABASE_URL = pg.url!;
    }
    server = await startServerProcess({ env });
    doc = (await (await server.api('/api/openapi.json')).json()) as Json;
    const sub = await server.api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cmd: 'echo fuzz target' }) });
    jobId = ((await sub.json()) as { id: number }).id;
  });

  afterAll(async () => {
    agent.destroy();
    await server?.dispose();
    await pg?.dispose();
  });

  /**
   * One request over a kept-alive node:http connection, as fetch() would send it (the target
   * resolved against the server's URL: dot segments removed, the rest as given), the answer read
   * whole. Not fetch(): its Request/Response objects cost the test ~0.3 ms of CPU per request,
   * about half the file's own CPU over ~50,000 requests, and nothing the fuzz looks at.
   */
  function request(method: string, target: string, init: FuzzInit): Promise<{ status: number; text: string }> {
    const u = new URL(target, server.url);
    return new Promise((resolve, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, path: `${u.pathname}${u.search}`, method, agent, headers: { authorization: `Bearer ${server.token}`, ...init.headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? -1, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(init.body);
    });
  }

  /** Sends one request; a 5xx (or no answer) is recorded with what was sent. */
  async function send(op: Operation, what: string, url: string, init: FuzzInit): Promise<void> {
    sent++;
    let status: number;
    let text = '';
    try {
      ({ status, text } = await request(op.method, url, init));
    } catch (err) {
      status = -1;
      text = String(err);
    }
    if (status >= 500 || status < 0) {
      const body = typeof init.body === 'string' ? ` body ${JSON.stringify(init.body.slice(0, 300))}` : '';
      failures.push(`${op.method} ${url.slice(0, 300)} [${what}]${body} → ${status} ${text.slice(0, 300)}`);
    }
  }

  const pathOf = (op: Operation, id: string = String(jobId)) => op.path.replace('{id}', id);
  const jsonInit = (body: string): FuzzInit => ({ headers: { 'content-type': 'application/json' }, body });

  // ~6,000 requests one after another: ~300 s per database kind in a CI run that keeps both cores
  // busy, so its own hang guard (docs/testing.md "Time") is 30 minutes, not the suite's 5.
  it('answers no hostile path parameter, query parameter or body with a 5xx', async () => {
    const ops = operations(doc);
    // The document must describe the routes whose inputs broke before.
    expect(ops.map((o) => `${o.method} ${o.path}`)).toEqual(expect.arrayContaining(['POST /api/jobs', 'GET /api/jobs', 'POST /api/jobs/cancel', 'GET /api/jobs/{id}/logs', 'GET /api/jobs/{id}/logs/download', 'POST /api/validate']));
    let salt = 0;
    for (const op of ops) {
      for (const p of op.params) {
        const values = valuesFor(hostileScalar, ++salt);
        if (p.in === 'path') {
          for (const v of values) await send(op, `path ${p.name}`, pathOf(op, pct(v)), op.json ? jsonInit('{}') : {});
          continue;
        }
        for (const v of [...values.map(pct), ...RAW_QUERY_VALUES]) {
          await send(op, `query ${p.name}`, `${pathOf(op)}?${p.name}=${v}`, op.json ? jsonInit('{}') : {});
          // The same beside the other parameters' benign values.
          const others = op.params.filter((o) => o.in === 'query' && o.name !== p.name).map((o) => `${o.name}=${pct(benign(doc, o.schema))}`);
          if (others.length) await send(op, `query ${p.name} + others`, `${pathOf(op)}?${[...others, `${p.name}=${v}`].join('&')}`, op.json ? jsonInit('{}') : {});
        }
      }
      const body = resolve(doc, op.json);
      const fields = Object.entries(body.properties ?? {});
      for (const [name] of fields) {
        const values = valuesFor(hostileValue, ++salt);
        for (const [i, v] of values.entries()) {
          await send(op, `body ${name}`, pathOf(op), jsonInit(JSON.stringify({ [name]: v })));
          // A few generated values also beside each other field alone (pairs a cross-field rule
          // may refuse together with all the others).
          if (i >= values.length - PAIRED) {
            for (const [other, schema] of fields) {
              if (other !== name) await send(op, `body ${name} + ${other}`, pathOf(op), jsonInit(JSON.stringify({ [other]: benign(doc, schema), [name]: v })));
            }
          }
          // Beside every other field's benign value, so the hostile one reaches the checks behind
          // the others' (one request, not one per other field: the pairs grew with the square of
          // a body's fields and took most of the suite's time without reaching anything new).
          const others = Object.fromEntries(fields.filter(([other]) => other !== name).map(([other, schema]) => [other, benign(doc, schema)]));
          if (fields.length > 1) await send(op, `body ${name} + others`, pathOf(op), jsonInit(JSON.stringify({ ...others, [name]: v })));
        }
      }
      if (op.json) for (const v of valuesFor(hostileValue, ++salt)) await send(op, 'whole body', pathOf(op), jsonInit(JSON.stringify(v) ?? 'null'));
      if (op.yaml) {
        for (const v of valuesFor(hostileString, ++salt)) {
          await send(op, 'yaml body', pathOf(op), { headers: { 'content-type': 'application/yaml' }, body: String(v) });
          await send(op, 'yaml body as run', pathOf(op), { headers: { 'content-type': 'application/yaml' }, body: `run: echo ${String(v)}\nname: "${String(v)}"\n` });
        }
      }
    }
    expect(sent).toBeGreaterThan(1000);
    expect(failures, `seed ${SEED} (JOBDECK_FUZZ_SEED=${SEED} replays it): ${failures.length} of ${sent} requests answered 5xx`).toEqual([]);
  }, 1_800_000);
});
