/**
 * An attempt's own token (docs/design.md §16 "An attempt's token"), on each database: made for
 * the job's submitter and announced on the bus; the database revokes it in the very statement
 * that ends its attempt (whoever writes that end), so the directory read after holds it no more;
 * the server's bus listener drops it at once; it is deleted with its job; none is made for an
 * attempt already ended or a disabled user; a second launch of the same attempt replaces it; and
 * it is no personal token (not listed, not counted).
 */
import { describe, expect, it } from 'vitest';
import { AuthDirectory } from '../../lib/auth/directory';
import type { StoreEvent } from '../../lib/store';
import { countLiveTokens, createAttemptToken, deleteTerminalJobs, directoryRows, listTokens, startAttempt, submitJob, transition, updateUser } from '../../lib/store';
import { attemptTokens } from '../../lib/server/isolation';
import type { AuthState } from '../../lib/auth/state';
import { DB_KINDS } from '../helpers/db';
import { useDatabase } from '../helpers/use-database';

describe.each(DB_KINDS)('an attempt\u2019s own token (%s)', (kind) => {
  const t = useDatabase(kind, `attempt-token-${kind}`);

  async function running(name: string, userId: number) {
    const job = await submitJob(t.store, { name, specYaml: 'run: x\n', spec: { name, tasks: [] }, specHash: 'h', cpus: 1, userId, tasks: [{ name: 't', spec: { run: 'x' } }] });
    const task = await t.prisma.task.findFirstOrThrow({ where: { jobId: job.id } });
    const a = await startAttempt(t.store, { taskId: task.id, taskFrom: 'PENDING', number: 1, cause: 'first' });
    if (a.outcome !== 'applied') throw new Error('no attempt');
    return { job, attempt: a.row };
  }
  const tokenOf = (jobId: number, attemptId: number, userId: number, hash: string) => ({ jobId, attemptId, userId, name: `job ${jobId} attempt 1`, prefix: 'jdp_abcdefgh', hash });

  it('lives as long as its attempt: revoked in the statement that ends it, dropped from the directory at once', async () => {
    const mia = await t.prisma.user.create({ data: { name: 'mia', role: 'member' } });
    const { job, attempt } = await running('a', mia.id);
    const dir = new AuthDirectory();
    const heard: StoreEvent[] = [];
    const onBus = (e: StoreEvent) => heard.push(e);
    t.store.bus.on('change', onBus);
    t.store.bus.on('change', attemptTokens(t.store, { directory: dir } as AuthState));
    const row = await createAttemptToken(t.store, tokenOf(job.id, attempt.id, mia.id, 'a'.repeat(64)));
    t.store.bus.off('change', onBus);
    expect(row).toMatchObject({ userId: mia.id, attemptId: attempt.id, revokedAt: null });
    expect(heard.map((e) => [e.type, e.token?.id])).toEqual([['token', row!.id]]);
    expect(dir.token('a'.repeat(64))?.token.attemptId).toBe(attempt.id);
    // Not a personal token: not listed, not counted against the user's limit.
    expect(await listTokens(t.store, mia.id)).toEqual([]);
    expect(await countLiveTokens(t.store, mia.id)).toBe(0);
    await transition(t.store, { entity: 'attempt', id: attempt.id, from: 'STARTING', to: 'RUNNING' });
    expect((await t.prisma.apiToken.findUniqueOrThrow({ where: { id: row!.id } })).revokedAt).toBeNull();
    await transition(t.store, { entity: 'attempt', id: attempt.id, from: 'RUNNING', to: 'SUCCEEDED' });
    expect((await t.prisma.apiToken.findUniqueOrThrow({ where: { id: row!.id } })).revokedAt).not.toBeNull();
    expect(dir.token('a'.repeat(64))).toBeUndefined();
    expect((await directoryRows(t.store)).tokens.map((x) => x.id)).not.toContain(row!.id);
  });

  it('none for an attempt that ended or a disabled user; a second launch of an attempt replaces its token; deleted with its job', async () => {
    const eli = await t.prisma.user.create({ data: { name: 'eli', role: 'member' } });
    const first = await running('b', eli.id);
    const one = await createAttemptToken(t.store, tokenOf(first.job.id, first.attempt.id, eli.id, 'b'.repeat(64)));
    const two = await createAttemptToken(t.store, tokenOf(first.job.id, first.attempt.id, eli.id, 'c'.repeat(64)));
    expect(await t.prisma.apiToken.findMany({ where: { attemptId: first.attempt.id }, select: { id: true } })).toEqual([{ id: two!.id }]);
    expect(one!.id).not.toBe(two!.id);
    await transition(t.store, { entity: 'attempt', id: first.attempt.id, from: 'STARTING', to: 'LOST' });
    expect(await createAttemptToken(t.store, tokenOf(first.job.id, first.attempt.id, eli.id, 'd'.repeat(64)))).toBeNull();
    const second = await running('c', eli.id);
    await updateUser(t.store, eli.id, { disabled: true });
    expect(await createAttemptToken(t.store, tokenOf(second.job.id, second.attempt.id, eli.id, 'e'.repeat(64)))).toBeNull();
    await transition(t.store, { entity: 'attempt', id: second.attempt.id, from: 'STARTING', to: 'LOST' });
    await t.prisma.task.updateMany({ data: { status: 'FAILED' } });
    await t.prisma.job.updateMany({ data: { status: 'FAILED' } });
    await deleteTerminalJobs(t.store, [first.job.id, second.job.id]);
    expect(await t.prisma.apiToken.count({ where: { attemptId: { not: null } } })).toBe(0);
  });
});
