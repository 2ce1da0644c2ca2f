'use client';
/**
 * A group's page (/groups/ID; docs/design.md §17 "Groups"): name, size, parameters, progress,
 * one row per slot (its latest job, how many runs it had), and the group's actions — cancel
 * every live job, re-run the slots that failed, delete the group with its jobs.
 */
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { flowApi } from '@/lib/ui/api';
import { groupLive, useCancelGroup, useGroup } from '@/lib/ui/flow-hooks';
import { ConfirmButton } from '../ConfirmButton';
import { StatusBadge } from '../StatusBadge';
import { countsText, GroupProgress } from './GroupRow';

export function GroupPage({ id }: { id: number }) {
  const group = useGroup(id);
  const cancel = useCancelGroup();
  const qc = useQueryClient();
  const router = useRouter();
  const [notice, setNotice] = useState<string | null>(null);
  if (!Number.isInteger(id) || id < 1) return <div className="alert alert-error">Not a group id.</div>;
  if (group.isError) return <div className="alert alert-error">Could not load group {id}: {group.error.message}</div>;
  const g = group.data;
  if (!g) return <p className="muted">Loading group {id}…</p>;
  const failed = g.slots.filter((s) => s.status !== 'SUCCEEDED' && (s.status === 'CANCELLED' || s.status.startsWith('FAILED'))).length;
  const act = async (fn: () => Promise<string>) => {
    try {
      setNotice(await fn());
    } catch (err) {
      setNotice(`Failed: ${(err as Error).message}`);
    }
    void qc.invalidateQueries({ queryKey: ['groups', id] });
  };
  const params = Object.entries(g.array.params);
  return (
    <>
      <div className="page-head">
        <h1>
          Group {g.id} · {g.name}
        </h1>
        <span className="grow" />
        {groupLive(g) && (
          <ConfirmButton className="btn" confirmLabel="Cancel all its jobs?" onConfirm={() => cancel(g.id)}>
            Cancel group
          </ConfirmButton>
        )}
        {failed > 0 && (
          <button type="button" className="btn" onClick={() => void act(async () => `${(await flowApi.rerunFailed(g.id)).rerun.length} slot(s) re-run.`)}>
            Re-run failed ({failed})
          </button>
        )}
        {!groupLive(g) && (
          <ConfirmButton className="btn btn-danger" confirmLabel="Delete the group and its jobs?" onConfirm={() => void act(async () => `${(await flowApi.deleteGroup(g.id)).deleted.length} job(s) deleted.`).then(() => router.push('/'))}>
            Delete group
          </ConfirmButton>
        )}
      </div>
      {notice && (
        <div className="alert alert-info" role="status">
          {notice}
        </div>
      )}
      <div className="card" data-testid="group-summary">
        <p>
          {g.size} jobs{params.length ? ` · ${params.map(([k, v]) => `${k} ∈ {${v.join(', ')}}`).join(' × ')}` : ''}
          {g.array.numJobs > 1 && params.length ? ` × ${g.array.numJobs} each` : ''} · by {g.owner ?? '—'}
        </p>
        <GroupProgress g={g} /> <span className="muted">{countsText(g.counts)}</span>
      </div>
      <div className="card table-wrap">
        <table className="table" data-testid="group-slots">
          <thead>
            <tr>
              <th scope="col">Slot</th>
              <th scope="col">Job</th>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Runs</th>
            </tr>
          </thead>
          <tbody>
            {g.slots.map((s) => (
              <tr key={s.index} data-slot={s.index}>
                <td>{s.index}</td>
                <td>
                  <Link href={`/jobs/${s.jobId}`}>{s.jobId}</Link>
                </td>
                <td>{s.name}</td>
                <td>
                  <StatusBadge status={s.status} />
                </td>
                <td>{s.runs}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
