'use client';
/**
 * The New job editor's check: the editor's lint source (CodeMirror calls it, debounced, with the
 * text) asks POST /api/validate — the API's own validator — and adds the masked secret values
 * left in the text; the verdict is kept for the badge and the problem list, the warnings (keys
 * accepted, not acted on) for the warning list.
 */
import { useCallback, useState } from 'react';
import { api, ApiRequestError, type SpecIssue } from '@/lib/ui/api';
import { issuesToDiagnostics, lineOf, maskedDiagnostics, type TextDiagnostic } from '@/lib/ui/spec-lint';

/** What the check says about the text. */
export type Validity =
  | { state: 'idle' | 'checking' | 'ok' | 'unavailable' }
  | { state: 'error'; problems: { line: number; message: string }[] };

const problemsOf = (text: string, ds: TextDiagnostic[]) => ds.map((d) => ({ line: lineOf(text, d.from), message: d.message }));

export function useSpecLint() {
  const [validity, setValidity] = useState<Validity>({ state: 'idle' });
  const [warnings, setWarnings] = useState<{ line: number; message: string }[]>([]);
  const lint = useCallback(async (yamlText: string, signal: AbortSignal): Promise<TextDiagnostic[]> => {
    const maskedHere = maskedDiagnostics(yamlText);
    setValidity({ state: 'checking' });
    let issues: SpecIssue[] = [];
    try {
      const r = await api.validate(yamlText, signal);
      issues = r.issues ?? [];
      if (signal.aborted) return [];
      const all = [...issuesToDiagnostics(yamlText, issues), ...maskedHere];
      // Values required at launch are shown like warnings: the text is valid, the submit needs them.
      const warned = issuesToDiagnostics(yamlText, [...(r.required ?? []), ...(r.warnings ?? [])], 'warning');
      setValidity(all.length === 0 && r.ok ? { state: 'ok' } : { state: 'error', problems: problemsOf(yamlText, all) });
      setWarnings(problemsOf(yamlText, warned));
      return [...all, ...warned];
    } catch (err) {
      if (signal.aborted) throw err;
      // A 400 answer with issues is a verdict too (validator answering as problem+json).
      if (err instanceof ApiRequestError && err.issues.length) {
        const all = [...issuesToDiagnostics(yamlText, err.issues), ...maskedHere];
        setValidity({ state: 'error', problems: problemsOf(yamlText, all) });
        return all;
      }
      setValidity(maskedHere.length ? { state: 'error', problems: problemsOf(yamlText, maskedHere) } : { state: 'unavailable' });
      return maskedHere;
    }
  }, []);
  return { validity, setValidity, warnings, lint };
}
