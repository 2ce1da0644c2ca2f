'use client';
/**
 * The job page: header, pipeline (tasks and attempts), and the live log viewer, all fed by the
 * job stream `/ws/jobs/:id` through the query cache — no reload, no polling.
 */
import Link from 'next/link';
import { useCallback, useState } from 'react';
import { isTerminal } from '@/lib/jobs/status';
import { ApiRequestError } from '@/lib/ui/api';
import { useJob, useJobStream, useNow } from '@/lib/ui/hooks';
import { JobHeader } from './JobHeader';
import { LogViewer, type JumpRequest } from './LogViewer';
import { Pipeline, taskDisplayName, type AttemptRef } from './Pipeline';

export function JobView({ id }: { id: number }) {
  const job = useJob(id);
  const { buffer, version, state, ended } = useJobStream(id);
  const now = useNow(1000);
  const [jump, setJump] = useState<JumpRequest | null>(null);
  const [viewing, setViewing] = useState<AttemptRef | null>(null);

  const onSelect = useCallback((r: AttemptRef) => setJump((j) => ({ ...r, seq: (j?.seq ?? 0) + 1 })), []);
  const data = job.data;
  // "task 1 (train) · attempt 2" in a pipeline (0-based task index, as everywhere in jobdeck);
  // "attempt 2" in a one-task job.
  const describe = useCallback(
    (r: AttemptRef) => {
      const t = data?.tasks[r.task];
      const total = data?.tasks.length ?? 1;
      if (total <= 1) return `attempt ${r.attempt}`;
      const name = t ? taskDisplayName(t, { name: data!.name, taskCount: total }) : null;
      return `task ${r.task}${name ? ` (${name})` : ''} · attempt ${r.attempt}`;
    },
    [data],
  );

  if (job.isError) {
    const notFound = job.error instanceof ApiRequestError && job.error.status === 404;
    return (
      <div className="card empty" role="alert">
        <h2>{notFound ? `Job ${id} not found` : `Could not load job ${id}`}</h2>
        <p>{notFound ? 'It may have been deleted.' : job.error.message}</p>
        <Link href="/" className="btn">
          Back to jobs
        </Link>
      </div>
    );
  }

  return (
    <>
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link href="/">Jobs</Link> / <span aria-current="page">#{id}</span>
      </nav>
      {data ? <JobHeader job={data} now={now} /> : <div className="card job-head muted">Loading job {id}…</div>}
      <div className="job-body">
        {data ? <Pipeline job={data} selected={viewing} onSelect={onSelect} now={now} /> : <div className="card pipeline muted">Loading…</div>}
        <LogViewer
          jobId={id}
          buffer={buffer}
          version={version}
          streamState={state}
          ended={ended}
          jobTerminal={!!data && isTerminal('job', data.status)}
          jump={jump}
          onViewing={setViewing}
          describe={describe}
        />
      </div>
    </>
  );
}
