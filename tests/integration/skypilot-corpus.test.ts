/**
 * The SkyPilot corpus (tests/fixtures/skypilot) through the job API's lib layer on both
 * databases: POST /api/validate's answer, the submit's answer (201 with the same warnings, or a
 * 400 naming the key), the warnings stored on the job and shown in its detail, and a repeated
 * submissionId answering the stored warnings again.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';
import { skypilotCorpus } from '../helpers/skypilot-corpus';
import { ApiError } from '../../lib/api/errors';
import { detail, submit, validate } from '../../lib/api/jobs';
import { parseSubmitRequest } from '../../lib/api/request';
import { formatSpecIssue, type SpecIssue } from '../../lib/jobs/spec';

const lines = (xs: SpecIssue[]) => xs.map(formatSpecIssue);

describe.each(DB_KINDS)('SkyPilot corpus through validate and submit on %s', (kind) => {
  // The corpus is written for a machine without GPUs (accelerators-local.yaml).
  beforeAll(() => {
    process.env.JOBDECK_LOCAL_GPUS = '0';
  });
  const t = useDatabase(kind, `skypilot-corpus-${kind}`);

  it.each(skypilotCorpus().map((c) => [c.file, c] as const))('%s', async (file, c) => {
    const v = await validate(t.store, c.text, file);
    expect(v.ok).toBe(c.accepted || c.required.length > 0);
    expect(v.required).toHaveLength(c.required.length);
    for (const text of c.required) expect(lines(v.required).join('\n')).toContain(text);
    const body = JSON.stringify({ yaml: c.text, filename: file, submissionId: `corpus-${file}` });
    const req = () => new Request('http://x/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    if (!c.accepted) {
      const before = await t.prisma.job.count();
      const err = await submit(t.store, await parseSubmitRequest(req())).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(400);
      const refused = lines(((err as ApiError).extra.issues ?? []) as SpecIssue[]).join('\n');
      for (const text of [...c.refusals, ...c.required]) expect(refused).toContain(text);
      expect(await t.prisma.job.count()).toBe(before);
      return;
    }
    expect(v.warnings).toHaveLength(c.warnings.length);
    for (const text of c.warnings) expect(lines(v.warnings).join('\n')).toContain(text);
    const out = await submit(t.store, await parseSubmitRequest(req()));
    expect(out.created).toBe(true);
    expect(out.result.warnings).toEqual(v.warnings);
    expect((await detail(t.store, out.result.id)).warnings).toEqual(v.warnings);
    const row = await t.prisma.job.findUniqueOrThrow({ where: { id: out.result.id } });
    expect(row.warnings).toEqual(v.warnings.length ? v.warnings : null);
    // The same submissionId again: the existing job, with its stored warnings.
    const again = await submit(t.store, await parseSubmitRequest(req()));
    expect({ created: again.created, id: again.result.id, warnings: again.result.warnings }).toEqual({ created: false, id: out.result.id, warnings: v.warnings });
  });
});
