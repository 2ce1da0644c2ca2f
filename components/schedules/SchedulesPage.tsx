'use client';
/**
 * The schedules (GET /api/schedules, read again every 5 s; docs/design.md §19 "Schedules"): each
 * with its cron expression and time zone, what it submits, its overlap and catch-up policies,
 * its next fire and its last one (the job, or why it was skipped) — pause / resume, run now,
 * delete — and a form that creates one from a spec. The server says what is wrong with a field
 * or the spec (file:line); a member changes only its own schedules.
 */
import Link from 'next/link';
import { useState, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { ScheduleView } from '@/lib/api/types';
import { flowApi } from '@/lib/ui/api';
import { useSchedules } from '@/lib/ui/flow-hooks';
import { ConfirmButton } from '../ConfirmButton';
import { RelativeTime } from '../Time';
import { useNow } from '@/lib/ui/hooks';

const EXAMPLE = 'name: nightly-bench\nrun: echo benchmark\n';

function ScheduleRow({ s, now, act }: { s: ScheduleView; now: number; act: (name: string, what: 'pause' | 'resume' | 'run' | 'delete') => void }) {
  return (
    <tr data-testid={`schedule-${s.name}`}>
      <td>
        <strong>{s.name}</strong>
        <span className="reason">{s.owner ? `by ${s.owner}` : ''}</span>
      </td>
      <td>
        <code>{s.cron}</code> <span className="faint">{s.timezone}</span>
      </td>
      <td>{s.jobId !== null ? <Link href={`/jobs/${s.jobId}`}>re-runs job {s.jobId}</Link> : 'a spec'}</td>
      <td className="muted">
        overlap {s.overlap} · catch-up {s.catchUp}
      </td>
      <td data-testid={`schedule-next-${s.name}`}>{s.paused ? <span className="faint">paused</span> : s.nextFireAt ? <RelativeTime iso={s.nextFireAt} now={now} /> : '—'}</td>
      <td data-testid={`schedule-last-${s.name}`}>
        {s.lastFireAt ? <RelativeTime iso={s.lastFireAt} now={now} /> : '—'}
        {s.lastJobId !== null && (
          <>
            {' '}
            · <Link href={`/jobs/${s.lastJobId}`}>job {s.lastJobId}</Link>
          </>
        )}
        {s.lastOutcome && s.lastOutcome !== 'submitted' && <span className="reason">{s.lastOutcome}</span>}
      </td>
      <td className="col-actions">
        <button type="button" className="btn btn-ghost btn-sm" onClick={() => act(s.name, 'run')} data-testid={`schedule-run-${s.name}`}>
          Run now
        </button>
        <button type="button" className="btn btn-ghost btn-sm" onClick={() => act(s.name, s.paused ? 'resume' : 'pause')} data-testid={`schedule-pause-${s.name}`}>
          {s.paused ? 'Resume' : 'Pause'}
        </button>
        <ConfirmButton className="btn btn-ghost btn-sm" confirmLabel="Delete it?" onConfirm={() => act(s.name, 'delete')}>
          Delete
        </ConfirmButton>
      </td>
    </tr>
  );
}

export function SchedulesPage() {
  const schedules = useSchedules();
  const qc = useQueryClient();
  const now = useNow(5000);
  const [notice, setNotice] = useState<{ tone: 'info' | 'error'; text: string } | null>(null);
  const [draft, setDraft] = useState({ name: '', cron: '0 3 * * *', timezone: 'UTC', yaml: EXAMPLE, overlap: 'skip', catchUp: 'last' });
  const refresh = () => void qc.invalidateQueries({ queryKey: ['schedules'] });
  const act = (name: string, what: 'pause' | 'resume' | 'run' | 'delete') => {
    const call = what === 'delete' ? flowApi.deleteSchedule(name) : flowApi.scheduleAction(name, what);
    call.then(
      (r) => {
        const job = what === 'run' ? (r as { jobId: number | null; outcome: string; detail: string | null }) : null;
        setNotice({ tone: 'info', text: job ? (job.jobId ? `Schedule ${name}: job ${job.jobId} submitted.` : `Schedule ${name}: ${job.outcome}${job.detail ? ` — ${job.detail}` : ''}.`) : `Schedule ${name}: ${what === 'delete' ? 'deleted' : `${what}d`}.` });
        refresh();
      },
      (err: Error) => setNotice({ tone: 'error', text: `Schedule ${name}: ${err.message}` }),
    );
  };
  const create = (e: FormEvent) => {
    e.preventDefault();
    flowApi.createSchedule(draft).then(
      (s) => {
        setNotice({ tone: 'info', text: `Schedule ${s.name} created.` });
        refresh();
      },
      (err: Error) => setNotice({ tone: 'error', text: `Not created: ${err.message}` }),
    );
  };
  const input = (key: 'name' | 'cron' | 'timezone', label: string, placeholder: string) => (
    <label className="field">
      <span className="field-label">{label}</span>
      <input className="input" value={draft[key]} placeholder={placeholder} onChange={(e) => setDraft({ ...draft, [key]: e.target.value })} data-testid={`schedule-form-${key}`} />
    </label>
  );
  return (
    <>
      <div className="page-head">
        <h1>Schedules</h1>
      </div>
      <div role="status" aria-live="polite" data-testid="schedule-notice">
        {notice && <div className={`alert alert-${notice.tone}`}>{notice.text}</div>}
      </div>
      {schedules.isError && <div className="alert alert-error">Could not load the schedules: {schedules.error.message}</div>}
      <div className="card table-wrap">
        <table className="table" data-testid="schedules-table">
          <thead>
            <tr>
              <th scope="col">Schedule</th>
              <th scope="col">Cron</th>
              <th scope="col">Submits</th>
              <th scope="col">Policies</th>
              <th scope="col">Next fire</th>
              <th scope="col">Last fire</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {schedules.data?.schedules.length === 0 && (
              <tr>
                <td colSpan={7} className="muted">
                  No schedules yet.
                </td>
              </tr>
            )}
            {(schedules.data?.schedules ?? []).map((s) => (
              <ScheduleRow key={s.name} s={s} now={now} act={act} />
            ))}
          </tbody>
        </table>
      </div>
      <form className="card queue-form" onSubmit={create} aria-label="New schedule" data-testid="schedule-form">
        <h2>New schedule</h2>
        <div className="queue-fields">
          {input('name', 'Name', 'nightly-bench')}
          {input('cron', 'Cron (minute hour day month weekday)', '0 3 * * *')}
          {input('timezone', 'Time zone', 'UTC')}
          <label className="field">
            <span className="field-label">While a run is live</span>
            <select className="input" value={draft.overlap} onChange={(e) => setDraft({ ...draft, overlap: e.target.value })} data-testid="schedule-form-overlap">
              <option value="skip">skip the fire</option>
              <option value="allow">run anyway</option>
              <option value="cancel_previous">cancel the previous run</option>
            </select>
          </label>
          <label className="field">
            <span className="field-label">After downtime</span>
            <select className="input" value={draft.catchUp} onChange={(e) => setDraft({ ...draft, catchUp: e.target.value })} data-testid="schedule-form-catchup">
              <option value="last">run the last missed time once</option>
              <option value="none">run none of them</option>
            </select>
          </label>
        </div>
        <label className="field">
          <span className="field-label">Job spec (YAML)</span>
          <textarea className="input" rows={6} value={draft.yaml} onChange={(e) => setDraft({ ...draft, yaml: e.target.value })} data-testid="schedule-form-yaml" spellCheck={false} />
        </label>
        <button type="submit" className="btn btn-primary" data-testid="schedule-create">
          Create schedule
        </button>
      </form>
    </>
  );
}
