'use client';
/**
 * New job: a YAML editor seeded from a template (templates/*.yaml) or from a job to re-run,
 * checked as the user types by the same validator as the API (debounced POST /api/validate;
 * problems shown at their line), and a submit that opens the new job's page with its logs
 * streaming.
 */
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useEffect, useRef, useState } from 'react';
import { ApiRequestError } from '@/lib/ui/api';
import { useJob, useSubmitJob } from '@/lib/ui/hooks';
import { draftWithLaunch } from '@/lib/ui/rerun-draft';
import { issuesToDiagnostics, lineOf, maskedDiagnostics } from '@/lib/ui/spec-lint';
import type { JobTemplate } from '@/lib/ui/templates';
import { IssueList, RerunNote, TemplateList, ValidityBadge } from './NewJobParts';
import { useSpecLint } from './useSpecLint';
import { YamlEditor, type YamlEditorHandle } from './YamlEditor';

/** The editor's text, what it was last loaded with (to tell edits apart), and where it came from. */
function useDraft(templates: JobTemplate[], starter: string, initialTemplate: string | null) {
  const editor = useRef<YamlEditorHandle>(null);
  const [templateId, setTemplateId] = useState<string | null>(initialTemplate);
  const [text, setText] = useState<string>(() => templates.find((t) => t.id === initialTemplate)?.yaml ?? starter);
  const [pristine, setPristine] = useState(text);
  const [draftFrom, setDraftFrom] = useState<number | null>(null);
  /** Replaces the editor's text (a template, a job's spec). */
  const load = (yaml: string, from: { template: string | null; job: number | null }) => {
    editor.current?.setValue(yaml);
    setText(yaml);
    setPristine(yaml);
    setTemplateId(from.template);
    setDraftFrom(from.job);
  };
  return { editor, templateId, text, setText, edited: text !== pristine && text.trim() !== '', draftFrom, load };
}

export function NewJobForm({ templates, starter, initialTemplate, fromJob }: { templates: JobTemplate[]; starter: string; initialTemplate: string | null; fromJob: number | null }) {
  const router = useRouter();
  const d = useDraft(templates, starter, initialTemplate);
  const { validity, setValidity, warnings, lint } = useSpecLint();
  const [submitError, setSubmitError] = useState<string | null>(null);
  const submit = useSubmitJob();
  const masked = maskedDiagnostics(d.text);

  // "Re-run with changes" (/jobs/new?from=ID): the editor starts from that job's spec as the API
  // shows it (secrets masked), with the name and envs given at launch written in, unless the
  // user already typed something.
  const source = useJob(fromJob ?? 0, fromJob !== null);
  const loadedFrom = useRef(false);
  useEffect(() => {
    const spec = source.data?.specYaml;
    if (fromJob === null || spec === undefined || loadedFrom.current) return;
    loadedFrom.current = true;
    if (!d.edited) d.load(draftWithLaunch(spec, source.data?.launch), { template: null, job: fromJob });
  }, [source.data, fromJob, d]);

  const chooseTemplate = (t: JobTemplate) => {
    if (d.edited && !window.confirm('Replace your edits with this template?')) return;
    d.load(t.yaml, { template: t.id, job: null });
    setSubmitError(null);
  };

  const blocked = masked.length > 0 || validity.state === 'error' || !d.text.trim();
  const doSubmit = () => {
    const yamlText = d.editor.current?.getValue() ?? d.text;
    if (maskedDiagnostics(yamlText).length || !yamlText.trim() || submit.isPending) return;
    setSubmitError(null);
    submit.mutate(
      { yaml: yamlText },
      {
        onSuccess: (r) => router.push(`/jobs/${r.id}`),
        onError: (e) => {
          if (e instanceof ApiRequestError && e.issues.length) {
            setValidity({ state: 'error', problems: issuesToDiagnostics(yamlText, e.issues).map((x) => ({ line: lineOf(yamlText, x.from), message: x.message })) });
          }
          setSubmitError(e.message);
        },
      },
    );
  };
  const submitRef = useRef(doSubmit);
  submitRef.current = doSubmit;
  const current = templates.find((t) => t.id === d.templateId);

  return (
    <>
      <div className="page-head">
        <h1>New job</h1>
        <span className="grow" />
        <Link prefetch={false} href="/" className="btn btn-ghost">
          Back to jobs
        </Link>
      </div>
      {d.draftFrom !== null && <RerunNote job={d.draftFrom} masked={masked.length > 0} />}
      {fromJob !== null && source.isError && (
        <div className="alert alert-error" role="alert">
          Could not load job {fromJob}&apos;s spec: {source.error.message}
        </div>
      )}
      <div className="new-job">
        <section className="card editor-card" aria-labelledby="editor-title">
          <div className="editor-bar">
            <h2 id="editor-title" style={{ fontSize: 14 }}>
              Job spec <span className="muted" style={{ fontWeight: 400 }}>(YAML{current ? ` · from the ${current.id} template` : ''})</span>
            </h2>
            <span className="grow" />
            <ValidityBadge validity={validity} masked={masked.length} />
          </div>
          <YamlEditor ref={d.editor} initial={d.text} label="Job spec (YAML)" onChange={d.setText} onSubmit={() => submitRef.current()} lint={lint} />
          {validity.state === 'error' && <IssueList problems={validity.problems} goTo={(line) => d.editor.current?.goToLine(line)} />}
          <IssueList problems={warnings} goTo={(line) => d.editor.current?.goToLine(line)} warnings />
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
        <TemplateList templates={templates} chosen={d.templateId} onChoose={chooseTemplate} />
      </div>
    </>
  );
}
