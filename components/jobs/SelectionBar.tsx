'use client';
/**
 * What can be done with the selected jobs: re-run them, cancel the unfinished ones, delete the
 * finished ones (asked once more).
 */
import type { JobSummary } from '@/lib/api/types';
import { canCancel, canDelete } from '@/lib/ui/format';
import { ConfirmButton } from '../ConfirmButton';

export function SelectionBar({ selected, onPage, busy, onCancel, onRerun, onDelete, onClear }: { selected: ReadonlySet<number>; onPage: JobSummary[]; busy: boolean; onCancel: () => void; onRerun: () => void; onDelete: () => void; onClear: () => void }) {
  const jobs = onPage.filter((j) => selected.has(j.id));
  const cancellable = jobs.filter((j) => canCancel(j.status)).length;
  const deletable = jobs.filter((j) => canDelete(j.status)).length;
  return (
    <div className="bulkbar" role="region" aria-label="Selection" data-testid="selection-bar">
      <strong>{selected.size} selected</strong>
      <button type="button" className="btn btn-sm" disabled={busy || selected.size === 0} onClick={onRerun} title="Submit each selected job's spec again as a new job">
        Re-run selected ({selected.size})
      </button>
      <button type="button" className="btn btn-danger btn-sm" disabled={cancellable === 0 || busy} onClick={onCancel}>
        Cancel selected{cancellable ? ` (${cancellable})` : ''}
      </button>
      <ConfirmButton className="btn btn-danger btn-sm" disabled={deletable === 0 || busy} onConfirm={onDelete} confirmLabel={`Confirm delete of ${deletable}`} ariaLabel={`Delete selected (${deletable})`}>
        Delete selected{deletable ? ` (${deletable})` : ''}
      </ConfirmButton>
      <button type="button" className="btn btn-ghost btn-sm" onClick={onClear}>
        Clear selection
      </button>
    </div>
  );
}
