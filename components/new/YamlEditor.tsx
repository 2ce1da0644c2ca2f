'use client';
/**
 * The YAML editor (CodeMirror 6): line numbers, YAML highlighting themed by CSS variables,
 * Enter keeps (and after `key:` deepens) indentation, Mod-Enter submits, and problems from the
 * lint source are underlined at their line with a gutter marker as the user types.
 *
 * Undo history and CodeMirror's default keymap (@codemirror/commands); Tab is left to move
 * focus, so keyboard users can leave the editor.
 */
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { bracketMatching, HighlightStyle, indentUnit, syntaxHighlighting } from '@codemirror/language';
import { yaml } from '@codemirror/lang-yaml';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { EditorSelection, EditorState } from '@codemirror/state';
import { drawSelection, EditorView, highlightActiveLine, highlightActiveLineGutter, highlightSpecialChars, keymap, lineNumbers } from '@codemirror/view';
import { tags as t } from '@lezer/highlight';
import { useEffect, useImperativeHandle, useRef, type Ref } from 'react';
import type { TextDiagnostic } from '@/lib/ui/spec-lint';

/** What the page can do with the editor. */
export interface YamlEditorHandle {
  getValue(): string;
  setValue(text: string): void;
  /** Moves the cursor to a 1-based line and focuses the editor. */
  goToLine(line: number): void;
  focus(): void;
}

const highlight = HighlightStyle.define([
  { tag: t.definition(t.propertyName), color: 'var(--accent)', fontWeight: '600' },
  { tag: [t.string, t.special(t.string)], color: 'var(--ansi-green)' },
  { tag: t.content, color: 'var(--text)' },
  { tag: [t.lineComment, t.comment], color: 'var(--text-faint)', fontStyle: 'italic' },
  { tag: [t.meta, t.keyword], color: 'var(--ansi-magenta)' },
  { tag: [t.labelName, t.typeName], color: 'var(--ansi-cyan)' },
  { tag: t.separator, color: 'var(--text-muted)' },
  { tag: t.attributeValue, color: 'var(--ansi-yellow)' },
]);

/** Enter: new line with the current indentation, one level deeper after `key:` or `key: |`. */
function newlineKeepIndent(view: EditorView): boolean {
  const { state } = view;
  view.dispatch(
    state.changeByRange((range) => {
      const line = state.doc.lineAt(range.from);
      const before = line.text.slice(0, range.from - line.from);
      let indent = /^[ \t]*/.exec(line.text)![0];
      if (/:\s*([|>][-+]?)?\s*$/.test(before) && !/^\s*#/.test(before)) indent += '  ';
      else if (/^\s*- /.test(before)) indent += '  ';
      const insert = `\n${indent}`;
      return { changes: { from: range.from, to: range.to, insert }, range: EditorSelection.cursor(range.from + insert.length) };
    }),
    { scrollIntoView: true, userEvent: 'input' },
  );
  return true;
}

export function YamlEditor({
  initial,
  onChange,
  onSubmit,
  lint,
  label,
  ref,
}: {
  initial: string;
  onChange?: (text: string) => void;
  onSubmit?: () => void;
  /** Problems of a text (called debounced after each change; `signal` aborts a stale check). */
  lint: (text: string, signal: AbortSignal) => Promise<TextDiagnostic[]>;
  label: string;
  ref?: Ref<YamlEditorHandle>;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  // Latest callbacks without re-creating the editor.
  const cb = useRef({ onChange, onSubmit, lint });
  cb.current = { onChange, onSubmit, lint };

  useEffect(() => {
    let inflight: AbortController | null = null;
    const v = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: initial,
        extensions: [
          lineNumbers(),
          highlightActiveLineGutter(),
          highlightSpecialChars(),
          drawSelection(),
          highlightActiveLine(),
          bracketMatching(),
          EditorState.tabSize.of(2),
          indentUnit.of('  '),
          yaml(),
          syntaxHighlighting(highlight),
          history(),
          keymap.of([
            { key: 'Enter', run: newlineKeepIndent },
            {
              key: 'Mod-Enter',
              run: () => {
                cb.current.onSubmit?.();
                return true;
              },
            },
            ...historyKeymap,
            ...defaultKeymap,
          ]),
          lintGutter(),
          linter(
            async (ev): Promise<Diagnostic[]> => {
              inflight?.abort();
              const ctl = new AbortController();
              inflight = ctl;
              const text = ev.state.doc.toString();
              try {
                const diags = await cb.current.lint(text, ctl.signal);
                const len = ev.state.doc.length;
                return diags.map((d) => ({ from: Math.min(d.from, len), to: Math.min(d.to, len), severity: d.severity, message: d.message }));
              } catch {
                return [];
              }
            },
            { delay: 400 },
          ),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) cb.current.onChange?.(u.state.doc.toString());
          }),
          EditorView.contentAttributes.of({ 'aria-label': label, 'aria-multiline': 'true', spellcheck: 'false', autocapitalize: 'off', autocorrect: 'off' }),
        ],
      }),
    });
    view.current = v;
    return () => {
      inflight?.abort();
      v.destroy();
      view.current = null;
    };
    // The editor is created once; `initial` only seeds it.
  }, []);

  useImperativeHandle(ref, () => ({
    getValue: () => view.current?.state.doc.toString() ?? '',
    setValue: (text: string) => {
      const v = view.current;
      if (!v) return;
      v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: text }, selection: EditorSelection.cursor(0) });
    },
    goToLine: (line: number) => {
      const v = view.current;
      if (!v) return;
      const l = v.state.doc.line(Math.min(Math.max(1, line), v.state.doc.lines));
      v.dispatch({ selection: EditorSelection.cursor(l.from), scrollIntoView: true });
      v.focus();
    },
    focus: () => view.current?.focus(),
  }));

  return <div ref={host} className="editor" data-testid="yaml-editor" />;
}
