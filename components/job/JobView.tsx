'use client';
/**
 * The job page: header, the log viewer filling the rest of the screen, and beside it (below it
 * on a phone, so the logs come first) the job's facts and its pipeline (tasks and attempts), all
 * fed by the job stream `/ws/jobs/:id` through the query cache — no reload, no polling. Picking
 * an attempt in the pipeline narrows the log to that attempt. The side panel has two tabs:
 * Pipeline, and Spec (what was submitted, SpecPanel) — the log viewer stays in view with either.
 */
import Link from 'next/link';
import { useCallback, useMemo, useState } from 'react';
import type { JobDetail } from '@/lib/api/types';
import { isTerminal } from '@/lib/jobs/status';
import { ApiRequestError } from '@/lib/ui/api';
import { useJob, useNow } from '@/lib/ui/hooks';
import { useJobLog } from '@/lib/ui/use-job-log';
import type { LogBuffer } from '@/lib/ui/log-buffer';
import type { SectionHeader } from '@/lib/ui/log-view';
import { JobFacts, JobHeader } from './JobHeader';
import type { SectionInfo } from './LogRows';
import { LogViewer } from './LogViewer';
import { logsRemovedText } from '@/lib/logs/protocol';
import { Pipeline, taskDisplayName, type AttemptRef } from './Pipeline';
import { SpecPanel } from './SpecPanel';
import { JobNotifications } from './JobNotifications';

/** How the log names tasks and attempts: "task 1 (train) · attempt 2"; "attempt 2" in a one-task job. */
function useNames(data: JobDetail | undefined) {
  const taskName = useCallback((i: number) => {
    const t = data?.tasks[i];
    return t && data ? taskDisplayName(t, { name: data.name, taskCount: data.tasks.length }) : null;
  }, [data]);
  const describe = useCallback(
    (r: AttemptRef) => {
      if ((data?.tasks.length ?? 1) <= 1) return `attempt ${r.attempt}`;
      const name = taskName(r.task);
      return `task ${r.task}${name ? ` (${name})` : ''} · attempt ${r.attempt}`;
    },
    [data, taskName],
  );
  const sections: SectionInfo & { taskSections: boolean } = useMemo(
    () => ({
      taskSections: (data?.tasks.length ?? 1) > 1,
      taskStatus: (i: number) => data?.tasks[i]?.status,
      title: (h: SectionHeader) => {
        const name = taskName(h.task);
        const task = `Task ${h.task}${name ? ` (${name})` : ''}`;
        if (h.kind === 'task') return task;
        return (data?.tasks.length ?? 1) > 1 ? `${task}, attempt ${h.attempt}` : `Attempt ${h.attempt}`;
      },
    }),
    [data, taskName],
  );
  return { describe, sections };
}

/**
 * Bytes of the job's logs the stream has brought so far (every attempt, every rank): the log's
 * size as it grows, between two reads of the job (its `logBytesTotal` is read every few seconds).
 * `version` only ties the figure to the buffer's changes. (The end of a long log shown first
 * counts from its offset: its attempt's figure is the log's size too.)
 */
function streamedBytes(job: JobDetail, buffer: LogBuffer, version: number): number {
  void version;
  let n = 0;
  for (const t of job.tasks) for (const a of t.attemptList) n += buffer.attemptStats(t.index, a.number).bytes;
  return n;
}

const SIDE_TABS = [
  { id: 'pipeline', label: 'Pipeline' },
  { id: 'spec', label: 'Spec' },
] as const;

/** The side panel's tab bar (WAI-ARIA tabs: arrows move between them). */
function SideTabs({ tab, onTab }: { tab: 'pipeline' | 'spec'; onTab: (t: 'pipeline' | 'spec') => void }) {
  return (
    <div className="side-tabs" role="tablist" aria-label="Job details">
      {SIDE_TABS.map((t, i) => (
        <button
          key={t.id}
          type="button"
          role="tab"
          id={`side-tab-${t.id}`}
          aria-selected={tab === t.id}
          aria-controls={`side-${t.id}`}
          tabIndex={tab === t.id ? 0 : -1}
          onClick={() => onTab(t.id)}
          onKeyDown={(e) => {
            if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
            const next = SIDE_TABS[(i + (e.key === 'ArrowRight' ? 1 : SIDE_TABS.length - 1)) % SIDE_TABS.length];
            onTab(next.id);
            document.getElementById(`side-tab-${next.id}`)?.focus();
          }}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

export function JobView({ id }: { id: number }) {
  const job = useJob(id);
  const { buffer, version, state, restarting, ended, preview } = useJobLog(id, job.data);
  const now = useNow(1000);
  const [selected, setSelected] = useState<AttemptRef | null>(null);
  const [viewing, setViewing] = useState<AttemptRef | null>(null);
  const [tab, setTab] = useState<'pipeline' | 'spec'>('pipeline');
  const data = job.data;
  const { describe, sections } = useNames(data);
  const showAll = useCallback(() => setSelected(null), []);

  if (job.isError) {
    const notFound = job.error instanceof ApiRequestError && job.error.status === 404;
    return (
      <div className="card empty" role="alert">
        <h2>{notFound ? `Job ${id} not found` : `Could not load job ${id}`}</h2>
        <p>{notFound ? 'It may have been deleted.' : job.error.message}</p>
        <Link prefetch={false} href="/" className="btn">
          Back to jobs
        </Link>
      </div>
    );
  }

  return (
    <div className="job-page">
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link prefetch={false} href="/">Jobs</Link> / <span aria-current="page">#{id}</span>
      </nav>
      {data ? <JobHeader job={data} /> : <div className="card job-head muted">Loading job {id}…</div>}
      <div className="job-side">
        {data && <JobFacts job={data} now={now} streamedBytes={streamedBytes(data, buffer, version)} />}
        <SideTabs tab={tab} onTab={setTab} />
        <div role="tabpanel" id={`side-${tab}`} aria-labelledby={`side-tab-${tab}`}>
          {!data ? (
            <div className="card pipeline muted">Loading…</div>
          ) : tab === 'pipeline' ? (
            <Pipeline job={data} selected={selected ?? viewing} onSelect={setSelected} now={now} />
          ) : (
            <SpecPanel job={data} />
          )}
        </div>
        <JobNotifications jobId={id} live={!data || !isTerminal('job', data.status)} />
      </div>
      {data?.logsRemovedAt ? (
        <div className="card log-removed" role="status" data-testid="logs-removed">
          {logsRemovedText(data.logsRemovedAt)}
        </div>
      ) : null}
      <LogViewer
        jobId={id}
        buffer={buffer}
        version={version}
        streamState={state}
        restarting={restarting}
        ended={ended}
        jobTerminal={!!data && isTerminal('job', data.status)}
        removed={data?.logsRemovedAt ? logsRemovedText(data.logsRemovedAt) : null}
        selected={selected}
        onShowAll={showAll}
        onViewing={setViewing}
        describe={describe}
        sections={sections}
        preview={preview}
      />
    </div>
  );
}
