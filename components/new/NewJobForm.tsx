'use client';
/**
 * New job: a YAML editor seeded from the example templates, checked as the user types by the
 * same validator as the API (debounced POST /api/validate; problems shown at their line), and a
 * submit that opens the new job's page with its logs streaming.
 */
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { ApiRequestError, type SpecIssue } from '@/lib/ui/api';
import { api } from '@/lib/ui/api';
import { useJob, useSubmitJob } from '@/lib/ui/hooks';
import { issuesToDiagnostics, lineOf, maskedDiagnostics, type TextDiagnostic } from '@/lib/ui/spec-lint';
import type { JobTemplate } from '@/lib/ui/templates';
import { YamlEditor, type YamlEditorHandle } from './YamlEditor';

/** Text with `backticked` parts as <code> (the examples' comments quote commands that way). */
function withCode(text: string): ReactNode[] {
  return text.split('`').map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : part));
}

type Validity =
  | { state: 'idle' | 'checking' | 'ok' | 'unavailable' }
  | { state: 'error'; problems: { line: number; message: string }[] };

export function NewJobForm({ templates, starter, initialTemplate, fromJob }: { templates: JobTemplate[]; starter: string; initialTemplate: string | null; fromJob: number | null }) {
  const router = useRouter();
  const editor = useRef<YamlEditorHandle>(null);
  const [templateId, setTemplateId] = useState<string | null>(initialTemplate);
  const [text, setText] = useState<string>(() => templates.find((t) => t.id === initialTemplate)?.yaml ?? starter);
  const [pristine, setPristine] = useState(text);
  const [validity, setValidity] = useState<Validity>({ state: 'idle' });
  const [submitError, setSubmitError] = useState<string | null>(null);
  const [draftFrom, setDraftFrom] = useState<number | null>(null);
  const submit = useSubmitJob();
  const masked = maskedDiagnostics(text);

  // "Re-run…" (/jobs/new?from=ID): the editor starts from that job's spec (as the API shows it,
  // secrets masked), unless the user already typed something.
  const source = useJob(fromJob ?? 0, fromJob !== null);
  const loadedFrom = useRef(false);
  useEffect(() => {
    const spec = source.data?.specYaml;
    if (fromJob === null || spec === undefined || loadedFrom.current) return;
    loadedFrom.current = true;
    if (text !== pristine) return;
    editor.current?.setValue(spec);
    setText(spec);
    setPristine(spec);
    setTemplateId(null);
    setDraftFrom(fromJob);
  }, [source.data, fromJob, text, pristine]);

  const lint = useCallback(async (yamlText: string, signal: AbortSignal): Promise<TextDiagnostic[]> => {
    const maskedHere = maskedDiagnostics(yamlText);
    setValidity({ state: 'checking' });
    let issues: SpecIssue[] = [];
    try {
      const r = await api.validate(yamlText, signal);
      issues = r.issues ?? [];
      if (signal.aborted) return [];
      const all = [...issuesToDiagnostics(yamlText, issues), ...maskedHere];
      setValidity(all.length === 0 && r.ok ? { state: 'ok' } : { state: 'error', problems: all.map((d) => ({ line: lineOf(yamlText, d.from), message: d.message })) });
      return all;
    } catch (err) {
      if (signal.aborted) throw err;
      // A 400 answer with issues is a verdict too (validator answering as problem+json).
      if (err instanceof ApiRequestError && err.issues.length) {
        const all = [...issuesToDiagnostics(yamlText, err.issues), ...maskedHere];
        setValidity({ state: 'error', problems: all.map((d) => ({ line: lineOf(yamlText, d.from), message: d.message })) });
        return all;
      }
      setValidity(maskedHere.length ? { state: 'error', problems: maskedHere.map((d) => ({ line: lineOf(yamlText, d.from), message: d.message })) } : { state: 'unavailable' });
      return maskedHere;
    }
  }, []);

  const chooseTemplate = (t: JobTemplate) => {
    if (text !== pristine && text.trim() && !window.confirm('Replace your edits with this template?')) return;
    editor.current?.setValue(t.yaml);
    setText(t.yaml);
    setPristine(t.yaml);
    setTemplateId(t.id);
    setDraftFrom(null);
    setSubmitError(null);
  };

  const blocked = masked.length > 0 || validity.state === 'error' || !text.trim();
  const doSubmit = () => {
    const yamlText = editor.current?.getValue() ?? text;
    if (maskedDiagnostics(yamlText).length || !yamlText.trim() || submit.isPending) return;
    setSubmitError(null);
    submit.mutate(
      { yaml: yamlText },
      {
        onSuccess: (r) => router.push(`/jobs/${r.id}`),
        onError: (e) => {
          if (e instanceof ApiRequestError && e.issues.length) {
            setValidity({ state: 'error', problems: issuesToDiagnostics(yamlText, e.issues).map((d) => ({ line: lineOf(yamlText, d.from), message: d.message })) });
          }
          setSubmitError(e.message);
        },
      },
    );
  };
  const submitRef = useRef(doSubmit);
  submitRef.current = doSubmit;

  const current = templates.find((t) => t.id === templateId);

  return (
    <>
      <div className="page-head">
        <h1>New job</h1>
        <span className="grow" />
        <Link href="/" className="btn btn-ghost">
          Back to jobs
        </Link>
      </div>
      {draftFrom !== null && (
        <div className={`alert ${masked.length ? 'alert-warning' : 'alert-info'}`} role="status" data-testid="rerun-note">
          {masked.length ? (
            <>
              Re-running job {draftFrom}: its spec holds secret values the API never shows back (<code>••••••</code>). Type each one again, then submit.
            </>
          ) : (
            <>Re-running job {draftFrom} with its spec; edit it if you like, then submit.</>
          )}
        </div>
      )}
      {fromJob !== null && source.isError && (
        <div className="alert alert-error" role="alert">
          Could not load job {fromJob}&apos;s spec: {source.error.message}
        </div>
      )}
      <div className="new-job">
        <section className="card editor-card" aria-labelledby="editor-title">
          <div className="editor-bar">
            <h2 id="editor-title" style={{ fontSize: 14 }}>
              Job spec <span className="muted" style={{ fontWeight: 400 }}>(YAML{current ? ` · from ${current.id}.yaml` : ''})</span>
            </h2>
            <span className="grow" />
            <span className="validity" data-state={validity.state === 'error' || masked.length ? 'error' : validity.state} role="status" aria-live="polite" data-testid="validity">
              {masked.length
                ? `${masked.length} masked value${masked.length === 1 ? '' : 's'} to replace`
                : validity.state === 'ok'
                  ? '✓ Valid spec'
                  : validity.state === 'checking'
                    ? 'Checking…'
                    : validity.state === 'error'
                      ? `${validity.problems.length} problem${validity.problems.length === 1 ? '' : 's'}`
                      : validity.state === 'unavailable'
                        ? 'Validator unavailable — the server checks on submit'
                        : ''}
            </span>
          </div>
          <YamlEditor
            ref={editor}
            initial={text}
            label="Job spec (YAML)"
            onChange={setText}
            onSubmit={() => submitRef.current()}
            lint={lint}
          />
          {validity.state === 'error' && validity.problems.length > 0 && (
            <ul className="issues" aria-label="Problems" data-testid="issues">
              {validity.problems.map((p, i) => (
                <li key={i}>
                  <button type="button" onClick={() => editor.current?.goToLine(p.line)} aria-label={`Go to line ${p.line}`}>
                    line {p.line}
                  </button>
                  <span>{p.message}</span>
                </li>
              ))}
            </ul>
          )}
          <div className="editor-foot">
            {submitError && (
              <span className="validity" data-state="error" role="alert">
                {submitError}
              </span>
            )}
            <span className="grow" style={{ flex: 1 }} />
            <span className="hint">
              <kbd>Ctrl</kbd>+<kbd>Enter</kbd> to submit
            </span>
            <button type="button" className="btn btn-primary" onClick={doSubmit} disabled={blocked || submit.isPending} data-testid="submit-job">
              {submit.isPending ? 'Submitting…' : 'Submit job'}
            </button>
          </div>
        </section>
        <aside className="card side" aria-labelledby="templates-title">
          <h2 id="templates-title">Templates</h2>
          {templates.length === 0 ? (
            <p className="hint">No examples found in the project&apos;s examples/ folder.</p>
          ) : (
            <ul className="template-list">
              {templates.map((t) => (
                <li key={t.id}>
                  <button type="button" className="template-btn" aria-pressed={t.id === templateId} onClick={() => chooseTemplate(t)} title={t.description || undefined} data-template={t.id}>
                    <strong>{t.id}</strong>
                    <span className="template-summary">{withCode(t.summary || t.name)}</span>
                  </button>
                </li>
              ))}
            </ul>
          )}
          <p className="hint">
            From a terminal: <code>npx jobdeck launch spec.yaml</code>. Several tasks run in order when separated by <code>---</code>; <code>job_recovery.max_restarts_on_errors</code> restarts a failed task.
          </p>
        </aside>
      </div>
    </>
  );
}
