/**
 * The OpenAPI document (lib/api/openapi.ts): it covers every route handler under app/api (each
 * exported method), its schemas are valid JSON Schema 2020-12, and they accept and refuse the
 * same request bodies as the zod schemas the handlers validate with; the team and server
 * answers the handlers build conform to their components.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../lib/api/openapi';
import { serverView } from '../../lib/api/monitor';
import { CancelRequestSchema, SubmitJsonSchema } from '../../lib/api/schemas';
import { userView } from '../../lib/api/team';
import { CreateTokenSchema, CreateUserSchema, PatchUserSchema } from '../../lib/api/team-schemas';

type Json = Record<string, any>;
const ROOT = path.resolve(__dirname, '..', '..');
const doc = buildOpenApiDocument() as Json;

/** [openapi path, method] for every exported handler of every app/api/**\/route.ts. */
function routes(): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === 'route.ts') {
        const rel = path.relative(path.join(ROOT, 'app'), path.dirname(p)).split(path.sep);
        const apiPath = '/' + rel.map((s) => s.replace(/^\[(\.\.\.)?(.+)\]$/, '{$2}')).join('/');
        for (const m of readFileSync(p, 'utf8').matchAll(/export const (GET|POST|PUT|PATCH|DELETE)\b/g)) out.push([apiPath, m[1].toLowerCase()]);
      }
    }
  };
  walk(path.join(ROOT, 'app', 'api'));
  return out;
}

function ajv() {
  const a = new Ajv2020({ strict: false, allErrors: true });
  a.addFormat('date-time', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  a.addSchema({ $id: 'doc', components: doc.components } as Json);
  return a;
}

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 with the JSON Schema 2020-12 dialect', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.jsonSchemaDialect).toContain('2020-12');
    expect(doc.info.description).toContain('/ws/jobs/{id}');
  });

  it('documents every route handler under app/api', () => {
    const found = routes();
    expect(found.length).toBeGreaterThan(5);
    for (const [p, method] of found) expect(doc.paths[p]?.[method], `${method.toUpperCase()} ${p}`).toBeDefined();
  });

  it('resolves every $ref and compiles every component schema', () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(10);
    for (const r of refs) expect(doc.components.schemas[r], r).toBeDefined();
    const a = ajv();
    for (const id of Object.keys(doc.components.schemas)) expect(() => a.compile({ $ref: `doc#/components/schemas/${id}` }), id).not.toThrow();
  });

  it('accepts and refuses request bodies like the zod schemas the handlers use', () => {
    const a = ajv();
    const submit = a.compile({ $ref: 'doc#/components/schemas/SubmitRequest' });
    const cancel = a.compile({ $ref: 'doc#/components/schemas/CancelRequest' });
    const bodies: Array<[unknown, 'submit' | 'cancel']> = [
      [{ yaml: 'run: x', submissionId: 'a-1', envs: { A: 'b' } }, 'submit'],
      [{ cmd: 'echo', name: 'n', metadata: { k: [1] } }, 'submit'],
      [{ cmd: 'echo', submission_id: 'x' }, 'submit'],
      [{ cmd: 'echo', envs: { A: 1 } }, 'submit'],
      [{ cmd: 'echo', envs: { '1A': 'x' } }, 'submit'],
      [{ cmd: '' }, 'submit'],
      [{ ids: [1, 2] }, 'cancel'],
      [{ ids: [0] }, 'cancel'],
      [{ ids: [] }, 'cancel'],
      [{ all: true }, 'cancel'],
      [{ all: false }, 'cancel'],
      [{ status: ['RUNNING'], q: 'x' }, 'cancel'],
      [{ status: ['NOPE'] }, 'cancel'],
      [{ nope: 1 }, 'cancel'],
    ];
    for (const [body, kind] of bodies) {
      const zodOk = (kind === 'submit' ? SubmitJsonSchema : CancelRequestSchema).safeParse(body).success;
      const docOk = (kind === 'submit' ? submit : cancel)(body);
      expect(docOk, JSON.stringify(body)).toBe(zodOk);
    }
  });

  it('describes the list query from the schema (statuses, limit bounds)', () => {
    const params = doc.paths['/api/jobs'].get.parameters as Json[];
    const status = params.find((p) => p.name === 'status')!;
    expect(status.schema.items.enum).toContain('FAILED_SETUP');
    expect(params.find((p) => p.name === 'limit')!.schema).toMatchObject({ minimum: 1, maximum: 200, default: 50 });
  });
  it('takes the team bodies and answers from the zod schemas the handlers use', () => {
    const a = ajv();
    const cases: Array<[string, { safeParse(v: unknown): { success: boolean } }, unknown[]]> = [
      ['CreateTokenRequest', CreateTokenSchema, [{ name: 'ci' }, { name: 'ci', expiresInDays: 30 }, { name: '' }, { name: 'x'.repeat(64) }, { name: 'ci', expiresInDays: 0 }, { name: 'ci', userId: 0 }, { name: 'ci', extra: 1 }, {}]],
      ['CreateUserRequest', CreateUserSchema, [{ name: 'ada', role: 'member' }, { name: 'ada', role: 'boss' }, { name: 'Ada', role: 'member' }, { name: 'ada', role: 'viewer', password: 'short' }, { name: 'ada', role: 'admin', maxRunningCpus: null, maxPendingJobs: 3 }, { name: 'ada', role: 'admin', maxPendingJobs: 1.5 }, { role: 'member' }]],
      ['PatchUserRequest', PatchUserSchema, [{}, { role: 'viewer' }, { password: null }, { password: 'longenough' }, { disabled: 'yes' }, { maxRunningCpus: -1 }, { osUser: 'ada' }, { osUser: '-x' }, { maxRunningGpus: 0.5 }, { nope: true }]],
    ];
    for (const [id, schema, bodies] of cases) {
      const check = a.compile({ $ref: `doc#/components/schemas/${id}` });
      for (const body of bodies) expect(check(body), `${id} ${JSON.stringify(body)}`).toBe(schema.safeParse(body).success);
    }
    const user = a.compile({ $ref: 'doc#/components/schemas/User' });
    const row = { id: 2, name: 'ada', role: 'member', passwordHash: null, oidcSubject: null, maxRunningCpus: 4, maxRunningGpus: 1, maxPendingJobs: null, osUser: 'ada', disabledAt: null, sessionEpoch: 0, tokenEpoch: 0, createdAt: new Date() };
    expect(user(JSON.parse(JSON.stringify(userView(row, {})))), JSON.stringify(user.errors)).toBe(true);
    const server = a.compile({ $ref: 'doc#/components/schemas/Server' });
    const live = { id: 's1', host: 'h', hostId: 'hid', pid: 42, startedAt: new Date(), heartbeatAt: new Date(), heartbeatAgeMs: 12, jobsOwned: 3, takeovers: 0 };
    expect(server(JSON.parse(JSON.stringify(serverView(live, 's1')))), JSON.stringify(server.errors)).toBe(true);
    expect(doc.paths['/api/monitor'].get.responses[200].content['application/json'].schema.properties.servers.items).toEqual({ $ref: '#/components/schemas/Server' });
  });
});
