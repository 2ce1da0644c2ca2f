'use client';
/** The New job page's smaller parts: the validity badge, the problem list, the re-run note, the templates. */
import type { ReactNode } from 'react';
import type { JobTemplate } from '@/lib/ui/templates';
import type { Validity } from './useSpecLint';

/** Text with `backticked` parts as <code> (the templates' comments quote commands that way). */
function withCode(text: string): ReactNode[] {
  return text.split('`').map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : part));
}

export function ValidityBadge({ validity, masked }: { validity: Validity; masked: number }) {
  let text = '';
  if (masked) text = `${masked} masked value${masked === 1 ? '' : 's'} to replace`;
  else if (validity.state === 'ok') text = '✓ Valid spec';
  else if (validity.state === 'checking') text = 'Checking…';
  else if (validity.state === 'error') text = `${validity.problems.length} problem${validity.problems.length === 1 ? '' : 's'}`;
  else if (validity.state === 'unavailable') text = 'Validator unavailable — the server checks on submit';
  return (
    <span className="validity" data-state={validity.state === 'error' || masked ? 'error' : validity.state} role="status" aria-live="polite" data-testid="validity">
      {text}
    </span>
  );
}

export function IssueList({ problems, goTo, warnings = false }: { problems: { line: number; message: string }[]; goTo: (line: number) => void; warnings?: boolean }) {
  if (!problems.length) return null;
  return (
    <ul className={warnings ? 'issues issues-warning' : 'issues'} aria-label={warnings ? 'Warnings' : 'Problems'} data-testid={warnings ? 'warnings' : 'issues'}>
      {problems.map((p, i) => (
        <li key={i}>
          <button type="button" onClick={() => goTo(p.line)} aria-label={`Go to line ${p.line}`}>
            line {p.line}
          </button>
          <span>{p.message}</span>
        </li>
      ))}
    </ul>
  );
}

export function RerunNote({ job, masked }: { job: number; masked: boolean }) {
  return (
    <div className={`alert ${masked ? 'alert-warning' : 'alert-info'}`} role="status" data-testid="rerun-note">
      {masked ? (
        <>
          Re-running job {job}: its spec holds secret values the API never shows back (<code>••••••</code>). Type each one again, then submit.
        </>
      ) : (
        <>Re-running job {job} with its spec and the name and envs it was launched with; edit it if you like, then submit.</>
      )}
    </div>
  );
}

export function TemplateList({ templates, chosen, onChoose }: { templates: JobTemplate[]; chosen: string | null; onChoose: (t: JobTemplate) => void }) {
  return (
    <aside className="card side" aria-labelledby="templates-title">
      <h2 id="templates-title">Start from a template</h2>
      {templates.length === 0 ? (
        <p className="hint">No templates found in the project&apos;s templates/ folder.</p>
      ) : (
        <ul className="template-list">
          {templates.map((t) => (
            <li key={t.id}>
              <button type="button" className="template-btn" aria-pressed={t.id === chosen} onClick={() => onChoose(t)} title={t.description || undefined} data-template={t.id}>
                <strong>{t.id}</strong>
                <span className="template-summary">{withCode(t.summary || t.name)}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <p className="hint">
        From a terminal: <code>npx jobdeck launch spec.yaml</code>. Several tasks run in order when separated by <code>---</code>; <code>job_recovery.max_restarts_on_errors</code> restarts a failed task. More cases, each with its expected outcome, are in the project&apos;s <code>examples/</code> folder.
      </p>
    </aside>
  );
}
