/**
 * What the API shows of groups and schedules (docs/design.md §17, §19): the store's rows mapped to
 * GroupSummary, GroupDetail and ScheduleView (lib/api/types.ts), secrets masked.
 */
import type { Schedule, ScheduleFire } from '../generated/prisma/client';
import { isTerminal, type JobStatus } from '../jobs/status';
import { groupLeadJobs, groupRows, groupSlots, groupStatusCounts, userNames, type StoreScope } from '../store';
import { maskSpecYaml } from './mask';
import type { GroupDetail, GroupSummary, ScheduleFireView, ScheduleView } from './types';

/** The summaries of groups `ids` (missing ones skipped), in the order of `ids`. */
export async function groupSummaries(store: StoreScope, ids: readonly number[]): Promise<GroupSummary[]> {
  if (!ids.length) return [];
  const [rows, counts, leads] = await Promise.all([groupRows(store, ids), groupStatusCounts(store, ids), groupLeadJobs(store, ids)]);
  const names = await userNames(store, [...rows.values()].map((r) => r.userId));
  const out: GroupSummary[] = [];
  for (const id of ids) {
    const g = rows.get(id);
    if (!g) continue;
    const c = (counts.get(id) ?? {}) as Partial<Record<JobStatus, number>>;
    const a = (g.array ?? {}) as { numJobs?: number; params?: Record<string, string[]> };
    out.push({
      id,
      name: g.name,
      size: g.size,
      counts: c,
      done: Object.entries(c).reduce((n, [st, k]) => n + (isTerminal('job', st) ? (k ?? 0) : 0), 0),
      jobId: leads.get(id) ?? 0,
      owner: g.userId === null ? null : (names.get(g.userId) ?? null),
      submittedAt: g.createdAt.toISOString(),
      array: { numJobs: a.numJobs ?? g.size, params: a.params ?? {} },
    });
  }
  return out;
}

/** A group with its slots, or null. */
export async function groupDetail(store: StoreScope, id: number): Promise<GroupDetail | null> {
  const [summary] = await groupSummaries(store, [id]);
  if (!summary) return null;
  const slots = await groupSlots(store, id);
  return { ...summary, slots: slots.map((s) => ({ index: s.index, jobId: s.jobId, name: s.name, status: s.status as JobStatus, runs: s.runs })) };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A schedule as the API shows it (its YAML masked); `fires` newest first. */
export function toScheduleView(s: Schedule, owner: string | null, fires: readonly ScheduleFire[] = []): ScheduleView {
  return {
    id: s.id,
    name: s.name,
    owner,
    cron: s.cron,
    timezone: s.timezone,
    specYaml: s.specYaml === null ? null : maskSpecYaml(s.specYaml),
    jobId: s.jobId,
    overlap: s.overlap as ScheduleView['overlap'],
    catchUp: s.catchUp as ScheduleView['catchUp'],
    paused: s.paused,
    nextFireAt: iso(s.nextFireAt),
    lastFireAt: iso(s.lastFireAt),
    lastJobId: s.lastJobId,
    lastOutcome: s.lastOutcome,
    createdAt: s.createdAt.toISOString(),
    fires: fires.map(toFireView),
  };
}

function toFireView(f: ScheduleFire): ScheduleFireView {
  return { fireAt: f.fireAt.toISOString(), kind: f.kind as ScheduleFireView['kind'], outcome: f.outcome as ScheduleFireView['outcome'], jobId: f.jobId, detail: f.detail, at: f.at.toISOString() };
}
