/**
 * `secrets` and values given at launch (docs/spec.md "secrets", "envs"), on both databases, with
 * the real monitor and local executor: a secret reaches the task as an env var; the YAML shown
 * back, the task's envs and the launch values show it masked whatever its name; an env or secret
 * left empty is "required at launch" — validate lists it apart (not an error), a submit without
 * it is a 400 naming it, with it the job runs; a re-run reuses a secret given at launch
 * server-side without ever answering it.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import type { PrismaClient } from '../../lib/generated/prisma/client';
import { ApiError } from '../../lib/api/errors';
import { detail, rerun, submit, validate } from '../../lib/api/jobs';
import { parseSubmitRequest } from '../../lib/api/request';
import { MASKED_VALUE } from '../../lib/auth/secrets';
import { formatSpecIssue, type SpecIssue } from '../../lib/jobs/spec';
import { Fixture, waitTerminal } from './monitor-helpers';

const jsonRequest = (body: unknown) => new Request('http://x/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe.each(DB_KINDS)('secrets and values given at launch on %s', (kind) => {
  const t = useDatabase(kind, `spec-secrets-${kind}`);
  let db: PrismaClient;
  let fx: Fixture;
  beforeAll(() => {
    db = t.prisma;
  });
  afterEach(async () => {
    await fx?.cleanup(db);
  });

  const out = () => path.join(fx.home, 'out');
  const yaml = () => `name: with-secrets
envs:
  PLAIN: visible
  NEEDED:
secrets:
  DB_PASS: s3cr3t-in-file
  API_TOKEN:
run: printf '%s|%s|%s|%s' "$PLAIN" "$NEEDED" "$DB_PASS" "$API_TOKEN" > '${out()}'
`;

  it('validate lists the empty ones as required at launch, not as errors; submit without them names them', async () => {
    fx = new Fixture();
    const v = await validate(t.store, yaml(), 'task.yaml');
    expect(v.ok).toBe(true);
    expect(v.issues).toEqual([]);
    expect(v.required.map(formatSpecIssue)).toEqual([
      'task.yaml:4 task[0].envs.NEEDED: has no value: required at launch — give it in the spec or at launch (--env NEEDED, or --env NEEDED=…)',
      'task.yaml:7 task[0].secrets.API_TOKEN: has no value: required at launch — give it in the spec or at launch (--secret API_TOKEN, or --secret API_TOKEN=…)',
    ]);
    const before = await db.job.count();
    const err = await refusal(submit(t.store, await parseSubmitRequest(jsonRequest({ yaml: yaml(), filename: 'task.yaml', envs: { NEEDED: 'n' } }))));
    expect(err.status).toBe(400);
    expect((err.extra.issues as SpecIssue[]).map((i) => i.path)).toEqual(['task[0].secrets.API_TOKEN']);
    expect(await db.job.count()).toBe(before);
  });

  it('runs with the launch values; every view masks the secrets; a re-run reuses them server-side', async () => {
    fx = new Fixture();
    const m = fx.monitor(db);
    await m.start();
    const given = 'launch-only-token-42';
    const r = await submit(t.store, await parseSubmitRequest(jsonRequest({ yaml: yaml(), envs: { NEEDED: 'from-launch' }, secrets: { API_TOKEN: given } })));
    const j = await waitTerminal(db, r.result.id);
    expect(j.status).toBe('SUCCEEDED');
    expect(readFileSync(out(), 'utf8')).toBe(`visible|from-launch|s3cr3t-in-file|${given}`);

    const d = await detail(t.store, r.result.id);
    const shown = JSON.stringify(d);
    expect(shown).not.toContain('s3cr3t-in-file');
    expect(shown).not.toContain(given);
    expect(d.specYaml).toContain(`DB_PASS: ${MASKED_VALUE}`);
    expect(d.tasks[0].envs).toEqual({ PLAIN: 'visible', NEEDED: 'from-launch', DB_PASS: MASKED_VALUE, API_TOKEN: MASKED_VALUE });
    expect(d.launch.envs).toEqual({ NEEDED: 'from-launch', API_TOKEN: MASKED_VALUE });

    // The attempt's log holds only what the task printed (nothing): the secret is not logged.
    const log = j.tasks[0].attempts[0].logPath;
    expect(log && existsSync(log) ? readFileSync(log, 'utf8') : '').not.toContain(given);

    const again = await rerun(t.store, r.result.id, 'api');
    expect(JSON.stringify(again)).not.toContain(given);
    const j2 = await waitTerminal(db, again.result.id);
    expect(j2.status).toBe('SUCCEEDED');
    expect(readFileSync(out(), 'utf8')).toBe(`visible|from-launch|s3cr3t-in-file|${given}`);
    expect(JSON.stringify(await detail(t.store, again.result.id))).not.toContain(given);
  });

  it('refuses a name given both as an env and as a secret, and a bad secret name at launch', async () => {
    fx = new Fixture();
    const both = await refusal(submit(t.store, await parseSubmitRequest(jsonRequest({ yaml: 'envs:\n  A: "1"\nsecrets:\n  A: "2"\nrun: "true"\n' }))));
    expect((both.extra.issues as SpecIssue[]).map(formatSpecIssue)).toEqual(['job.yaml:4 task[0].secrets.A: A is given both as an env and as a secret: keep one']);
    const bad = await refusal(parseSubmitRequest(jsonRequest({ yaml: 'run: "true"\n', secrets: { 'BAD-NAME': 'x' } })));
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.extra)).toContain('secrets');
  });
});
