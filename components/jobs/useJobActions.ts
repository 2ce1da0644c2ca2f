'use client';
/**
 * What the jobs list does to jobs — one (the row menu) or the selection (the selection bar) —
 * each reported in one notice line: "Cancelling 2 jobs; 1 had already finished", "Deleted
 * jobs 3, 4; job 5 was not: …", "Re-ran job 7 as job 12".
 */
import { useMemo, useState } from 'react';
import type { CancelResult, JobSummary } from '@/lib/api/types';
import { canDelete } from '@/lib/ui/format';
import { useCancelJob, useCancelJobs, useDeleteJob, useDeleteJobs, useRerunJobs, type BulkOutcome } from '@/lib/ui/hooks';
import type { RowActions } from './RowMenu';

/** A line above the list saying what an action did. */
export interface Notice {
  tone: 'info' | 'error';
  text: string;
}

function describeCancel(r: CancelResult): string {
  const parts: string[] = [];
  const n = r.cancelled.length + r.cancelling.length;
  if (n) parts.push(`Cancelling ${n} job${n === 1 ? '' : 's'}`);
  if (r.alreadyTerminal.length) parts.push(`${r.alreadyTerminal.length} had already finished`);
  if (r.notFound.length) parts.push(`${r.notFound.length} no longer exist`);
  return parts.join('; ') || 'Nothing to cancel';
}

const jobs = (ids: number[]) => (ids.length === 1 ? `job ${ids[0]}` : `jobs ${ids.join(', ')}`);

function describeBulk(verb: 'Deleted' | 'Re-ran', asked: number[], r: BulkOutcome): Notice {
  const parts: string[] = [];
  if (r.done.length) parts.push(verb === 'Deleted' ? `Deleted ${jobs(r.done)}` : `Re-ran ${jobs(asked.filter((id) => !r.refused.some((x) => x.id === id)))} as ${jobs(r.done)}`);
  for (const x of r.refused) parts.push(`job ${x.id} was not ${verb === 'Deleted' ? 'deleted' : 're-run'}: ${x.why}`);
  return { tone: r.refused.length ? 'error' : 'info', text: parts.join('; ') || 'Nothing to do' };
}

/** The row and bulk actions, their notices, and whether one is under way. */
export function useJobActions(selected: ReadonlySet<number>, onPage: JobSummary[], clearSelection: () => void) {
  const [notice, setNotice] = useState<Notice | null>(null);
  const cancel = useCancelJob();
  const cancelMany = useCancelJobs();
  const del = useDeleteJob();
  const delMany = useDeleteJobs();
  const rerun = useRerunJobs();
  const fail = (what: string) => (e: Error) => setNotice({ tone: 'error', text: `Could not ${what}: ${e.message}` });

  const row: RowActions = useMemo(
    () => ({
      cancel: (j) => cancel.mutate(j.id, { onSuccess: (r) => setNotice({ tone: 'info', text: `Job ${j.id}: ${describeCancel(r)}` }), onError: fail(`cancel job ${j.id}`) }),
      remove: (j) => del.mutate(j.id, { onSuccess: () => setNotice({ tone: 'info', text: `Deleted job ${j.id}` }), onError: fail(`delete job ${j.id}`) }),
      rerun: (j) => rerun.mutate([j.id], { onSuccess: (r) => setNotice(describeBulk('Re-ran', [j.id], r)), onError: fail(`re-run job ${j.id}`) }),
    }),
    // The mutation objects change identity on every state change; their mutate functions do not.
    [cancel.mutate, del.mutate, rerun.mutate],
  );

  const ids = () => [...selected].sort((a, b) => a - b);
  const bulk = {
    cancel: () => cancelMany.mutate(ids(), { onSuccess: (r) => (setNotice({ tone: 'info', text: describeCancel(r) }), clearSelection()), onError: fail('cancel') }),
    remove: () => {
      const finished = onPage.filter((j) => selected.has(j.id) && canDelete(j.status)).map((j) => j.id).sort((a, b) => a - b);
      delMany.mutate(finished, { onSuccess: (r) => (setNotice(describeBulk('Deleted', finished, r)), clearSelection()), onError: fail('delete') });
    },
    rerun: () => {
      const asked = ids();
      rerun.mutate(asked, { onSuccess: (r) => (setNotice(describeBulk('Re-ran', asked, r)), clearSelection()), onError: fail('re-run') });
    },
  };
  const busy = cancel.isPending || cancelMany.isPending || del.isPending || delMany.isPending || rerun.isPending;
  return { row, bulk, busy, notice, setNotice };
}
