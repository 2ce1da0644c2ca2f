import { describe, expect, it } from 'vitest';
import type { JobList, JobSummary } from '../../lib/api/types';
import { applyListMessage, mergeFetchedPage, type ListFilter } from '../../lib/ui/list-cache';
import { issuesToDiagnostics, lineOf, maskedDiagnostics } from '../../lib/ui/spec-lint';
import { formatClockMs, formatDuration } from '../../lib/ui/format';

const j = (id: number, status: JobSummary['status'] = 'RUNNING'): JobSummary =>
  ({ id, name: `job-${id}`, status, tasks: [] }) as unknown as JobSummary;
const page = (...ids: number[]): JobList => ({ jobs: ids.map((i) => j(i)), nextCursor: null });
const f = (over: Partial<ListFilter> = {}): ListFilter => ({ status: [], q: '', sort: 'newest', cursor: null, limit: 50, ...over });

describe('applyListMessage', () => {
  it('updates a job in place', () => {
    const p = page(3, 2, 1);
    const next = applyListMessage(p, f(), { type: 'updated', job: j(2, 'SUCCEEDED') }) as JobList;
    expect(next.jobs.map((x) => `${x.id}:${x.status}`)).toEqual(['3:RUNNING', '2:SUCCEEDED', '1:RUNNING']);
    expect(applyListMessage(p, f(), { type: 'updated', job: j(9) })).toBe(p);
  });
  it('prepends a created job on the first page only, when its status matches the filter', () => {
    expect((applyListMessage(page(2, 1), f(), { type: 'created', job: j(3) }) as JobList).jobs.map((x) => x.id)).toEqual([3, 2, 1]);
    const p = page(2, 1);
    expect(applyListMessage(p, f({ cursor: 'c' }), { type: 'created', job: j(3) })).toBe(p);
    expect(applyListMessage(p, f({ status: ['SUCCEEDED'] }), { type: 'created', job: j(3, 'PENDING') })).toBe(p);
    expect(applyListMessage(p, f({ q: 'abc' }), { type: 'created', job: j(3) })).toBe('refetch');
    // A queue's page takes only that queue's new jobs.
    const inQueue = (id: number, queue: string) => ({ ...j(id), queue }) as JobSummary;
    expect(applyListMessage(p, f({ queue: 'gpu' }), { type: 'created', job: inQueue(3, 'default') })).toBe(p);
    expect((applyListMessage(p, f({ queue: 'gpu' }), { type: 'created', job: inQueue(3, 'gpu') }) as JobList).jobs.map((x) => x.id)).toEqual([3, 2, 1]);
    // In another order, where it goes is the server's to say; a job already there is updated.
    expect(applyListMessage(p, f({ sort: 'name' }), { type: 'created', job: j(3) })).toBe('refetch');
    expect(applyListMessage(p, f({ sort: 'oldest', cursor: 'c' }), { type: 'created', job: j(3) })).toBe('refetch');
    expect((applyListMessage(p, f({ sort: 'oldest' }), { type: 'created', job: j(2, 'SUCCEEDED') }) as JobList).jobs.map((x) => `${x.id}:${x.status}`)).toEqual(['2:SUCCEEDED', '1:RUNNING']);
  });
  it('removes a deleted job', () => {
    expect((applyListMessage(page(3, 2, 1), f(), { type: 'deleted', jobId: 2 }) as JobList).jobs.map((x) => x.id)).toEqual([3, 1]);
  });
});

describe('mergeFetchedPage', () => {
  const show = (l: JobList) => l.jobs.map((x) => `${x.id}:${x.status}`);
  it('replays the stream messages that came while the fetch was in flight (the fetch read the database before)', () => {
    // Page open: the socket first, then GET; the stream's RUNNING landed before GET answered STARTING.
    const cached: JobList = { jobs: [j(2, 'RUNNING'), j(1, 'RUNNING')], nextCursor: null };
    const fresh: JobList = { jobs: [j(3, 'PENDING'), j(2, 'STARTING'), j(1, 'SUCCEEDED')], nextCursor: 'c' };
    const merged = mergeFetchedPage(cached, fresh, f(), [{ type: 'updated', job: j(2, 'RUNNING') }]);
    expect(show(merged)).toEqual(['3:PENDING', '2:RUNNING', '1:SUCCEEDED']);
    expect(merged.nextCursor).toBe('c');
  });
  it('on a first load (nothing cached), keeps what the stream said meanwhile: the e2e "stuck STARTING" row', () => {
    // The updates came while the page's first GET was in flight: no cached page to apply them to.
    const fresh: JobList = { jobs: [j(24, 'STARTING'), j(23, 'RUNNING'), j(22, 'SUCCEEDED')], nextCursor: null };
    const merged = mergeFetchedPage(undefined, fresh, f(), [
      { type: 'updated', job: j(23, 'RUNNING') },
      { type: 'updated', job: j(24, 'RUNNING') },
      { type: 'created', job: j(25, 'PENDING') },
      { type: 'deleted', jobId: 22 },
    ]);
    expect(show(merged)).toEqual(['25:PENDING', '24:RUNNING', '23:RUNNING']);
  });
  it('applies the messages in order: the last one for a job wins', () => {
    const fresh: JobList = { jobs: [j(2, 'STARTING')], nextCursor: null };
    const merged = mergeFetchedPage(undefined, fresh, f(), [{ type: 'updated', job: j(2, 'RUNNING') }, { type: 'updated', job: j(2, 'CANCELLING') }]);
    expect(show(merged)).toEqual(['2:CANCELLING']);
  });
  it('follows the page\'s filter: a created job lands only on a first page it matches; a search page is left to its refetch', () => {
    const fresh: JobList = { jobs: [j(2, 'FAILED')], nextCursor: null };
    const created = [{ type: 'created', job: j(3, 'PENDING') }] as const;
    expect(show(mergeFetchedPage(undefined, fresh, f({ status: ['FAILED'] }), created))).toEqual(['2:FAILED']);
    expect(show(mergeFetchedPage(undefined, fresh, f({ cursor: 'c' }), created))).toEqual(['2:FAILED']);
    expect(show(mergeFetchedPage(undefined, fresh, f({ q: 'job' }), created))).toEqual(['2:FAILED']);
  });
  it('keeps a row the cache knows as ended when the fetched one is not (the refetch after a cancel)', () => {
    const cached: JobList = { jobs: [j(2, 'CANCELLED')], nextCursor: null };
    const merged = mergeFetchedPage(cached, { jobs: [j(2, 'CANCELLING')], nextCursor: null }, f(), []);
    expect(merged.jobs[0].status).toBe('CANCELLED');
  });
  it('answers the fetched page itself when nothing came and nothing ended', () => {
    const fresh: JobList = { jobs: [j(2, 'CANCELLED'), j(1, 'RUNNING')], nextCursor: null };
    expect(mergeFetchedPage(undefined, fresh, f(), [])).toBe(fresh);
    expect(mergeFetchedPage(page(2, 1), fresh, f(), [])).toBe(fresh);
    expect(mergeFetchedPage(page(5), fresh, f(), [{ type: 'updated', job: j(9, 'RUNNING') }])).toBe(fresh);
  });
});

describe('spec diagnostics', () => {
  const text = 'name: x\nresources:\n  cpus: lots\nrun: echo\n';
  it('places an issue at its line and column, with the key path', () => {
    const [d] = issuesToDiagnostics(text, [{ line: 3, column: 9, path: ['resources', 'cpus'], message: 'expected a number' }]);
    expect(text.slice(d.from, d.to)).toBe('lots');
    expect(d.message).toBe('resources.cpus: expected a number');
  });
  it('without a column: from the first non-blank character; without a line: line 1; past the end: last line', () => {
    const [a, b, c] = issuesToDiagnostics(text, [{ line: 3, message: 'm' }, { message: 'n' }, { line: 99, message: 'o' }]);
    expect(text.slice(a.from, a.to)).toBe('cpus: lots');
    expect(text.slice(b.from, b.to)).toBe('name: x');
    expect(lineOf(text, c.from)).toBe(5);
  });
  it('flags masked secret values', () => {
    const spec = 'envs:\n  API_TOKEN: ••••••\n  B: ok\n';
    const ds = maskedDiagnostics(spec);
    expect(ds).toHaveLength(1);
    expect(lineOf(spec, ds[0].from)).toBe(2);
  });
});

describe('formatDuration', () => {
  it('is compact', () => {
    expect([850, 4200, 12_000, 185_000, 7_380_000, 3 * 86_400_000 + 4 * 3_600_000].map(formatDuration)).toEqual(['850ms', '4.2s', '12s', '3m 05s', '2h 03m', '3d 4h']);
    expect(formatDuration(null)).toBe('—');
  });
});

describe('times to the millisecond', () => {
  it('formatClockMs shows the milliseconds of a status event', () => {
    const local = new Date(2026, 0, 2, 21, 37, 13, 42);
    expect(formatClockMs(local.toISOString())).toBe('21:37:13.042');
    expect(formatClockMs(null)).toBe('—');
  });
});
