'use client';
/**
 * The pipeline: each task with its attempts as a timeline (status, exit code, start, duration,
 * reason, and a bar placing the attempt within the job's time span). Clicking an attempt shows
 * its log in the viewer.
 */
import { memo } from 'react';
import type { AttemptView, JobDetail, TaskView } from '@/lib/api/types';
import { elapsedMs, formatClock, formatClockMs, formatDuration, formatExact, statusTone } from '@/lib/ui/format';
import { StatusBadge } from '../StatusBadge';
import { AttemptUsage } from './AttemptUsage';

/** An attempt id (task index, attempt number). */
export interface AttemptRef {
  task: number;
  attempt: number;
}

function Track({ a, span, now }: { a: AttemptView; span: { start: number; end: number }; now: number }) {
  const s = a.startedAt ? Date.parse(a.startedAt) : NaN;
  if (!Number.isFinite(s) || span.end <= span.start) return null;
  const e = a.endedAt ? Date.parse(a.endedAt) : now;
  const w = span.end - span.start;
  const left = Math.max(0, Math.min(100, ((s - span.start) / w) * 100));
  const width = Math.max(0, Math.min(100 - left, ((e - s) / w) * 100));
  return (
    <div className={`track tone-${statusTone(a.status)}`} aria-hidden="true">
      <span style={{ left: `${left}%`, width: `${width}%` }} />
    </div>
  );
}

function AttemptItem({ task, a, selected, onSelect, span, now }: { task: TaskView; a: AttemptView; selected: boolean; onSelect: (r: AttemptRef) => void; span: { start: number; end: number }; now: number }) {
  const exit = a.exitCode;
  return (
    <li>
      <button
        type="button"
        className="attempt"
        aria-current={selected ? 'true' : undefined}
        onClick={() => onSelect({ task: task.index, attempt: a.number })}
        data-testid={`attempt-${task.index}-${a.number}`}
        data-status={a.status}
        aria-label={`Task ${task.index}, attempt ${a.number}: ${a.status}${exit === null ? '' : `, exit code ${exit}`}. Show its log`}
      >
        <span className="attempt-line">
          <span className="attempt-name">Attempt {a.number}</span>
          {a.cause !== 'first' && <span className="cause">{a.cause}</span>}
          <StatusBadge status={a.status} />
          {exit !== null && <span className={`exit ${exit === 0 ? 'exit-ok' : 'exit-bad'}`}>exit {exit}</span>}
        </span>
        <span className="attempt-facts">
          <span title={formatExact(a.startedAt ?? a.createdAt)}>started {formatClock(a.startedAt)}</span>
          <span>{a.startedAt ? formatDuration(elapsedMs(a.startedAt, a.endedAt, now)) : '—'}</span>
          {a.executor && a.executor !== 'local' && <span>{a.executor}</span>}
          {a.osUser && (
            <span className="mono" title="The OS account its setup and run ran as" data-testid={`attempt-${task.index}-${a.number}-os-user`}>
              as {a.osUser}
            </span>
          )}
          {a.nodes && a.nodes.length > 0 && (
            <span data-testid={`attempt-nodes-${task.index}-${a.number}`} title={`ran on ${a.nodes.join(', ')}`}>
              on {a.nodes.length <= 2 ? a.nodes.join(', ') : `${a.nodes[0]} +${a.nodes.length - 1}`}
            </span>
          )}
        </span>
        {a.reason && <span className="attempt-reason">{a.reason}</span>}
        {a.logLostBytes !== null && a.logLostBytes > 0 && (
          <span className="attempt-reason" data-testid={`attempt-${task.index}-${a.number}-log-lost`} title="The log could not take these bytes (the disk was full); a [jobdeck] line in the log marks where">
            log lost {a.logLostBytes.toLocaleString('en-US')} bytes of output: the disk was full
          </span>
        )}
        <Track a={a} span={span} now={now} />
      </button>
      {a.startedAt && <AttemptUsage u={a.usage} id={`${task.index}-${a.number}`} />}
    </li>
  );
}

/**
 * The name a task is shown with: its own; in a one-task job without one (a `--cmd` job named
 * with `-n`), the job's name; otherwise null (unnamed).
 */
export function taskDisplayName(task: { name: string | null }, job: { name: string; taskCount: number }): string | null {
  return task.name ?? (job.taskCount === 1 ? job.name : null);
}

function TaskCard({ task, total, name, selected, onSelect, span, now }: { task: TaskView; total: number; name: string | null; selected: AttemptRef | null; onSelect: (r: AttemptRef) => void; span: { start: number; end: number }; now: number }) {
  return (
    <section className="task" aria-label={`Task ${task.index}${name ? ` (${name})` : ''}`} data-testid={`task-${task.index}`} data-status={task.status}>
      <div className="task-head">
        <h3 title={`task ${task.index} · ${task.index + 1} of ${total}`}>
          <span className="task-index">{`Task ${task.index}`}</span>
          {name ?? <span className="muted">unnamed</span>}
        </h3>
        <StatusBadge status={task.status} title={task.statusReason} />
      </div>
      {(() => {
        const facts = [
          task.maxRestarts > 0 || task.restarts > 0 ? `restarts ${task.restarts}/${task.maxRestarts}` : null,
          task.exitCodeRestarts ? `restarts on exit code ${task.exitCodeRestarts}` : null,
          task.recoveries ? `recoveries ${task.recoveries}` : null,
          Object.keys(task.labels).length && total > 1 ? `labels ${Object.entries(task.labels).map(([k, v]) => `${k}=${v}`).join(', ')}` : null,
          task.statusReason && task.status !== 'SUCCEEDED' ? task.statusReason : null,
        ].filter(Boolean);
        return facts.length ? <div className="task-sub">{facts.join(' · ')}</div> : null;
      })()}
      {task.attemptList.length === 0 ? (
        <div className="no-attempt" data-testid={`task-${task.index}-no-attempt`}>
          {task.status === 'CANCELLED' ? 'No attempt — cancelled before it started.' : task.status === 'PENDING' ? 'Waiting for the tasks before it.' : 'No attempt yet.'}
        </div>
      ) : (
        <ol className="attempts" aria-label="Attempts">
          {task.attemptList.map((a) => (
            <AttemptItem key={a.number} task={task} a={a} selected={!!selected && selected.task === task.index && selected.attempt === a.number} onSelect={onSelect} span={span} now={now} />
          ))}
        </ol>
      )}
    </section>
  );
}

/** "job", "task 0", "task 0 attempt 2", "jobdeck" — what a history entry is about (0-based task index). */
function eventSubject(e: { entity: string; taskIndex: number | null; attemptNumber: number | null }): string {
  if (e.entity === 'server') return 'jobdeck';
  if (e.taskIndex === null) return e.entity;
  return e.attemptNumber !== null ? `task ${e.taskIndex} attempt ${e.attemptNumber}` : `task ${e.taskIndex}`;
}

/** How the server's own history entries read (lib/store server-event.ts). */
const SERVER_EVENT_LABEL: Record<string, string> = { STOPPED: 'stopped', READOPTED: 'restarted, re-adopted the job' };

/** The tasks and attempts of a job. */
export const Pipeline = memo(function Pipeline({ job, selected, onSelect, now }: { job: JobDetail; selected: AttemptRef | null; onSelect: (r: AttemptRef) => void; now: number }) {
  const start = Date.parse(job.startedAt ?? job.submittedAt);
  const end = job.endedAt ? Date.parse(job.endedAt) : now;
  const span = { start, end: Math.max(end, start + 1) };
  return (
    <div className="card pipeline" data-testid="pipeline">
      {/* The tab above names it; the heading stays for screen readers. */}
      <h2 className="visually-hidden">Pipeline</h2>
      {job.tasks.map((t) => (
        <TaskCard key={t.index} task={t} total={job.tasks.length} name={taskDisplayName(t, { name: job.name, taskCount: job.tasks.length })} selected={selected} onSelect={onSelect} span={span} now={now} />
      ))}
      {job.events.length > 0 && (
        <details>
          <summary className="muted" style={{ cursor: 'pointer', fontSize: 12.5 }}>
            Status history ({job.events.length})
          </summary>
          <ol className="attempts" style={{ fontSize: 12, marginTop: 6 }}>
            {job.events.map((e) => (
              <li key={e.id} style={{ padding: '3px 0', borderTop: '1px solid var(--border)' }} data-entity={e.entity} data-testid="history-event">
                <span className="mono faint" title={formatExact(e.at)}>
                  {formatClockMs(e.at)}
                </span>{' '}
                {e.entity === 'server' ? (
                  <>
                    <strong>jobdeck {SERVER_EVENT_LABEL[e.to] ?? e.to.toLowerCase()}</strong>
                  </>
                ) : (
                  <>
                    {eventSubject(e)}: {e.from ?? '∅'} → <strong>{e.to}</strong>
                  </>
                )}
                {e.reason ? <span className="muted"> — {e.reason}</span> : null}
              </li>
            ))}
          </ol>
        </details>
      )}
    </div>
  );
});
