'use client';
/**
 * The job page header: name, status, its reason — while PENDING, why it waits and a priority
 * control —, and the actions — cancel, delete (finished jobs), re-run as a new job. JobFacts (times, tasks, restarts, executor) is a card of its own,
 * so that on a phone the logs can come right after the header.
 *
 * "Re-run" asks the server to submit the job again as it was submitted (POST
 * /api/jobs/:id/rerun: the stored YAML with its secrets, the name and envs given at launch, the
 * metadata) and opens the new job. "Re-run with changes" opens the New job editor with that
 * spec and those overrides written in; secrets there show masked ("••••••") and must be typed
 * again, since the API never shows them back.
 */
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import type { JobDetail } from '@/lib/api/types';
import { canCancel, canDelete, formatDuration, elapsedMs } from '@/lib/ui/format';
import { isTerminal } from '@/lib/jobs/status';
import { placeText, waitingText } from '@/lib/jobs/waiting';
import { formatBytes } from '@/lib/jobs/usage';
import { logsRemovedText } from '@/lib/logs/protocol';
import { useQuery } from '@tanstack/react-query';
import type { UserMe } from '@/lib/api/types';
import { api } from '@/lib/ui/api';
import { useCancelJob, useDeleteJob, useNow, useRerunJob, useSetPriority } from '@/lib/ui/hooks';
import { jobPermissions, may as mayCall } from '@/lib/ui/permissions';
import { useViewer } from '@/lib/ui/team-hooks';
import { ConfirmButton } from '../ConfirmButton';
import { StatusBadge } from '../StatusBadge';
import { Elapsed, RelativeTime } from '../Time';

export function JobHeader({ job }: { job: JobDetail }) {
  const router = useRouter();
  const cancel = useCancelJob();
  const del = useDeleteJob();
  const rerunJob = useRerunJob();
  const [error, setError] = useState<string | null>(null);
  // The actions the viewer may take on this job (a member: on its own jobs).
  const viewer = useViewer();
  const may = jobPermissions(viewer, job.owner);
  const maySubmit = mayCall(viewer, 'POST /api/jobs');

  const rerun = () => {
    setError(null);
    rerunJob.mutate(job.id, { onSuccess: (r) => router.push(`/jobs/${r.id}`), onError: (e) => setError(`Re-run failed: ${e.message}`) });
  };

  return (
    <section className="card job-head" aria-labelledby="job-title" data-testid="job-header">
      <div className="job-title">
        <span className="job-id">#{job.id}</span>
        <h1 id="job-title">{job.name}</h1>
        <StatusBadge status={job.status} title={job.statusReason} />
        <div className="job-actions">
          {may.cancel && canCancel(job.status) && (
            <ConfirmButton
              className="btn btn-danger"
              confirmLabel="Confirm cancel"
              ariaLabel="Cancel job"
              disabled={cancel.isPending}
              onConfirm={() => cancel.mutate(job.id, { onError: (e) => setError(`Cancel failed: ${e.message}`) })}
            >
              Cancel job
            </ConfirmButton>
          )}
          {may.rerun && (
            <button type="button" className="btn" onClick={rerun} disabled={rerunJob.isPending} title="Submit this job again as it was submitted (spec, name, envs, metadata) as a new job">
              Re-run
            </button>
          )}
          {maySubmit && (
            <Link prefetch={false} className="btn" href={`/jobs/new?from=${job.id}`} title="Open New job with this job's spec and launch overrides, to edit before submitting">
              {may.rerun ? 'Re-run with changes' : 'Submit a copy'}
            </Link>
          )}
          {may.remove && canDelete(job.status) && (
            <ConfirmButton
              className="btn btn-danger"
              confirmLabel="Confirm delete"
              ariaLabel="Delete job"
              disabled={del.isPending}
              onConfirm={() => del.mutate(job.id, { onSuccess: () => router.push('/'), onError: (e) => setError(`Delete failed: ${e.message}`) })}
            >
              Delete
            </ConfirmButton>
          )}
        </div>
      </div>
      {error && (
        <div className="alert alert-error" role="alert" style={{ marginTop: 12, marginBottom: 0 }}>
          {error}
        </div>
      )}
      {job.statusReason && job.status !== 'SUCCEEDED' && (
        <p className="job-reason muted" data-testid="job-reason">
          {job.statusReason}
        </p>
      )}
      {job.warnings?.length > 0 && (
        <p className="job-reason" data-testid="job-warnings">
          ⚠ {job.warnings.length} key{job.warnings.length === 1 ? '' : 's'} of its spec accepted and not acted on (see Spec): {job.warnings.map((w) => w.path.replace(/^task\[\d+\]\./, '')).join(', ')}
        </p>
      )}
      {job.status === 'PENDING' && <Waiting job={job} mayChange={may.priority} viewer={viewer} />}
      {job.nextAttemptAt && !job.cancelRequested && <NextAttempt at={job.nextAttemptAt} />}
      {job.status !== 'PENDING' && job.pendingReason && (
        <p className="job-reason" data-testid="held-reason">
          Not running yet: {job.pendingReason} (submitted to {job.executor}, waiting in its queue)
        </p>
      )}
      {job.cancelRequested && !isTerminal('job', job.status) && (
        <p className="job-reason" role="status">
          Cancel requested — stopping the running attempt…
        </p>
      )}
    </section>
  );
}

/** A restart (or recovery) waiting out its backoff: "Restarting in 30 s", counting down. */
function NextAttempt({ at }: { at: string }) {
  const now = useNow(1000);
  const left = Date.parse(at) - now;
  return (
    <p className="job-reason" role="status" data-testid="next-attempt">
      {left > 500 ? `Restarting in ${formatDuration(left)} (backoff before the next attempt)` : 'Restarting now…'}
    </p>
  );
}

/**
 * The highest priority the viewer may give a job of `queue`: none for an admin (null), else the
 * role's cap (UserMe.maxPriority) lowered by the queue's member cap — what the server enforces
 * (lib/jobs/priority-cap.ts); shown so the field says it before a refusal does.
 */
function usePriorityCap(viewer: UserMe | null, queue: string, enabled: boolean): number | null {
  const q = useQuery({ queryKey: ['queues', 'one', queue], queryFn: ({ signal }) => api.queue(queue, signal), enabled: enabled && viewer?.role !== 'admin', staleTime: 60_000 });
  if (!viewer || viewer.role === 'admin') return null;
  const caps = [viewer.maxPriority, q.data?.memberMaxPriority ?? null].filter((c): c is number => c !== null);
  return caps.length ? Math.min(...caps) : null;
}

/**
 * Why a PENDING job waits (from the admission pass), its place in line (JobSummary.place: updated
 * as jobs ahead start), and its priority, which its submitter (or an admin: `mayChange`) can
 * change while it waits, up to the viewer's cap.
 */
function Waiting({ job, mayChange, viewer }: { job: JobDetail; mayChange: boolean; viewer: UserMe | null }) {
  const set = useSetPriority();
  const cap = usePriorityCap(viewer, job.queue, mayChange);
  const top = cap ?? 1000;
  const [value, setValue] = useState(String(job.priority));
  const [error, setError] = useState<string | null>(null);
  const n = Number(value);
  const valid = /^\d{1,4}$/.test(value) && n >= 0 && n <= top;
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    setError(null);
    if (valid) set.mutate({ id: job.id, priority: n }, { onError: (err) => setError(`Priority not changed: ${err.message}`) });
  };
  return (
    <div className="job-waiting">
      <p className="job-reason" data-testid="pending-reason">
        Waiting: {waitingText(job.pendingReason)} · queue {job.queue}
      </p>
      {job.place && (
        <p className="job-reason" data-testid="job-place">
          Place: {placeText(job.place, job.queue)}
        </p>
      )}
      {mayChange ? (
        <form className="priority-form" onSubmit={submit} aria-label="Priority">
          <label>
            Priority{' '}
            <input type="number" min={0} max={top} step={1} value={value} onChange={(e) => setValue(e.target.value)} aria-invalid={!valid} data-testid="priority-input" />
          </label>
          <button type="submit" className="btn" disabled={!valid || set.isPending || n === job.priority} data-testid="priority-set">
            Set
          </button>
          <span className="muted" data-testid="priority-range">
            {' '}
            0–{top}
            {cap !== null ? ' (your cap)' : ''}, higher starts first (now {job.priority})
          </span>
        </form>
      ) : (
        <p className="muted" data-testid="priority-readonly">
          Priority {job.priority} (higher starts first)
        </p>
      )}
      {error && (
        <div className="alert alert-error" role="alert">
          {error}
        </div>
      )}
    </div>
  );
}

/**
 * The job's times and counters (submitted, started, ended, durations, tasks, restarts, executor). `streamedBytes`: its logs' bytes the page's stream received so far — the
 * "Logs" figure is the larger of that and the disk usage last read (which also counts the time
 * indexes), so it grows with the log, not only when the job is read again.
 */
export function JobFacts({ job, now, streamedBytes = 0 }: { job: JobDetail; now: number; streamedBytes?: number }) {
  return (
    <section className="card job-facts" aria-label="Job details">
      <dl className="meta">
        <div>
          <dt>Submitted</dt>
          <dd>
            <RelativeTime iso={job.submittedAt} now={now} />
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>
            <RelativeTime iso={job.startedAt} now={now} />
          </dd>
        </div>
        <div>
          <dt>Ended</dt>
          <dd>
            <RelativeTime iso={job.endedAt} now={now} />
          </dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd title={`${formatDuration(elapsedMs(job.submittedAt, job.endedAt, now))} from submission to the end`}>
            <Elapsed start={job.startedAt} end={job.endedAt} now={now} />
          </dd>
        </div>
        <div>
          <dt>Queued</dt>
          <dd>{formatDuration(elapsedMs(job.submittedAt, job.startedAt ?? job.endedAt, now))}</dd>
        </div>
        <div>
          <dt>Tasks</dt>
          <dd>
            {job.tasksSucceeded}/{job.taskCount} succeeded
          </dd>
        </div>
        <div>
          <dt>Restarts</dt>
          <dd data-testid="job-restarts" title="after errors (counted against max_restarts_on_errors) · on an exit code of recover_on_exit_codes · recoveries (the executor lost an attempt)">
            {job.restartCount}
            {job.exitCodeRestartCount ? <span className="muted"> · {job.exitCodeRestartCount} on exit code</span> : null}
            {job.recoveryCount ? <span className="muted"> · {job.recoveryCount} recoveries</span> : null}
          </dd>
        </div>
        {Object.keys(job.labels).length > 0 && (
          <div>
            <dt>Labels</dt>
            <dd data-testid="job-labels">
              {Object.entries(job.labels).map(([k, v]) => (
                <code key={k} className="label-chip">
                  {k}={v}
                </code>
              ))}
            </dd>
          </div>
        )}
        <div>
          <dt>Executor</dt>
          <dd>{job.executor}</dd>
        </div>
        <div>
          <dt>Priority</dt>
          <dd data-testid="job-priority">{job.priority}</dd>
        </div>
        <div>
          <dt>Queue</dt>
          <dd>{job.queue}</dd>
        </div>
        <div>
          <dt>Logs</dt>
          <dd data-testid="job-log-usage">{job.logsRemovedAt ? <span className="muted">{logsRemovedText(job.logsRemovedAt)}</span> : `${formatBytes(Math.max(job.logBytesTotal, streamedBytes))} on disk`}</dd>
        </div>
        <div>
          <dt>Submitted by</dt>
          <dd>
            <span data-testid="job-owner">{job.owner ?? '-'}</span>
            {job.viaToken && (
              <span className="muted" data-testid="job-via-token">
                {' '}
                via token <code>{job.viaToken}</code>
              </span>
            )}
          </dd>
        </div>
      </dl>
    </section>
  );
}
