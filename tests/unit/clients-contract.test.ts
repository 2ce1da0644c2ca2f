/**
 * The client libraries against the server's own definitions, so neither drifts silently:
 *
 * - the files `npm run clients:generate` writes from the OpenAPI document (the TypeScript
 *   client's types, the Python client's contract) are what the document generates now — a
 *   change to an operation or schema a client uses fails here until the clients are regenerated
 *   (and then tsc, and the Python client's own contract tests, check the clients still fit);
 * - every operation a client names exists in the document;
 * - the TypeScript client's log frame decoder reads what the server's encoder writes, and its
 *   stream message types are the server's;
 * - its LogCursor resumes where the CLI's FollowRenderer resumes, over the same stream cut at
 *   every point (one rule for both).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeLogChunk as clientDecode, LogCursor, type StreamMessage as ClientMessage } from '../../clients/ts/src';
import type { StreamMessage as ServerMessage } from '../../lib/api/types';
import { buildOpenApiDocument } from '../../lib/api/openapi';
import { FollowRenderer } from '../../lib/cli/follow-render';
import { encodeLogChunk } from '../../lib/logs/protocol';
import { clientOperations, generateClientFiles } from '../../scripts/generate-clients';

const ROOT = path.resolve(__dirname, '..', '..');

// Type-level: a server message is a client message and back (tsc fails on a drift).
const toClient = (m: ServerMessage): ClientMessage => m;
const toServer = (m: ClientMessage): ServerMessage => m;
void toClient;
void toServer;

describe('the clients and the OpenAPI document', () => {
  it('the generated files are what the document generates now (run `npm run clients:generate` when it changed)', () => {
    for (const [rel, text] of Object.entries(generateClientFiles(buildOpenApiDocument()))) {
      expect(readFileSync(path.join(ROOT, rel), 'utf8'), `${rel} is stale: run \`npm run clients:generate\`, then check the clients against the change`).toBe(text);
    }
  });

  it('every operation a client calls is in the document', () => {
    const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, { operationId: string }>> };
    const ids = new Set(Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId)));
    const ops = clientOperations();
    for (const id of [...ops.typescript, ...ops.python]) expect(ids, id).toContain(id);
  });

  it('a removed field is noticed: the generator output changes', () => {
    const doc = buildOpenApiDocument() as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
    delete doc.components.schemas.JobSummary.properties.queue;
    const files = generateClientFiles(doc as unknown as Record<string, unknown>);
    expect(files['clients/ts/src/api.gen.ts']).not.toBe(readFileSync(path.join(ROOT, 'clients/ts/src/api.gen.ts'), 'utf8'));
    expect(files['clients/python/jobdeck/_api.py']).not.toBe(readFileSync(path.join(ROOT, 'clients/python/jobdeck/_api.py'), 'utf8'));
  });
});

describe('the TypeScript client reads the stream as the server writes it', () => {
  it('log frames of every kind decode to what was encoded', () => {
    for (const c of [
      { task: 0, attempt: 1, offset: 0, data: new Uint8Array([1, 2, 3]) },
      { task: 65535, attempt: 2 ** 32 - 1, offset: 2 ** 40 + 5, data: new Uint8Array(0) },
      { task: 3, attempt: 2, offset: 17, data: new Uint8Array([0xff]), rank: 7 },
    ]) {
      const back = clientDecode(encodeLogChunk(c));
      expect({ ...back, data: [...back.data] }).toEqual({ ...c, data: [...c.data] });
    }
    expect(() => clientDecode(new Uint8Array(10))).toThrow(/too short/);
  });

  it('LogCursor resumes where the CLI renderer resumes, the stream cut anywhere', () => {
    const enc = new TextEncoder();
    const stream: Array<ServerMessage | { chunk: { task: number; attempt: number; offset: number; data: Uint8Array; rank?: number } }> = [
      { type: 'hello', protocol: 1, job: { id: 1, name: 'j', status: 'RUNNING', taskCount: 2, tasks: [] } as never },
      { type: 'attempt', phase: 'start', task: 0, attempt: 1, status: 'RUNNING', cause: 'first', exitCode: null, reason: null, at: '', eventId: 3 },
      { chunk: { task: 0, attempt: 1, offset: 0, data: enc.encode('abc') } },
      { chunk: { task: 0, attempt: 1, offset: 3, data: enc.encode('def') } },
      { type: 'attempt', phase: 'end', task: 0, attempt: 1, status: 'FAILED', cause: 'first', exitCode: 1, reason: null, at: '', eventId: 5 },
      { type: 'task', task: 0, name: null, status: 'RUNNING', reason: null, at: '', eventId: 6 },
      { type: 'attempt', phase: 'start', task: 0, attempt: 2, status: 'RUNNING', cause: 'restart', exitCode: null, reason: null, at: '', eventId: 7, nodes: 2 },
      { chunk: { task: 0, attempt: 2, offset: 0, data: enc.encode('g') } },
      { chunk: { task: 0, attempt: 2, offset: 0, data: enc.encode('rank1'), rank: 1 } },
      { type: 'attempt', phase: 'end', task: 0, attempt: 2, status: 'SUCCEEDED', cause: 'restart', exitCode: 0, reason: null, at: '', eventId: 9 },
      { type: 'attempt', phase: 'start', task: 1, attempt: 1, status: 'RUNNING', cause: 'first', exitCode: null, reason: null, at: '', eventId: 10 },
      { chunk: { task: 1, attempt: 1, offset: 0, data: enc.encode('xyz') } },
      { type: 'end', status: 'SUCCEEDED', follow: true },
    ];
    for (let cut = 0; cut <= stream.length; cut++) {
      const cursor = new LogCursor();
      const renderer = new FollowRenderer({ jobId: 1 });
      for (const m of stream.slice(0, cut)) {
        if ('chunk' in m) {
          cursor.chunk(m.chunk);
          renderer.chunk(m.chunk);
        } else {
          cursor.message(m);
          renderer.message(m);
        }
      }
      expect(cursor.position(), `cut at ${cut}`).toEqual(renderer.position());
      expect(cursor.since(), `cut at ${cut}`).toBe(renderer.since());
      expect(cursor.done).toBe(renderer.done);
    }
  });
});
