/**
 * One log line as React text: ANSI colours become spans with classes/inline colours (anser via
 * lib/ui/ansi.ts); search hits become <mark>. Log text is only ever a text node — never HTML.
 */
import { memo, useState, type ReactNode } from 'react';
import { ansiToSpans } from '@/lib/ui/ansi';

/** Characters of one line drawn at most (the rest is in the raw download). */
export const MAX_LINE_CHARS = 10_000;

function highlight(text: string, q: string | null, keyBase: string): ReactNode {
  if (!q) return text;
  const lower = text.toLowerCase();
  const parts: ReactNode[] = [];
  let i = 0;
  let at: number;
  while ((at = lower.indexOf(q, i)) !== -1) {
    if (at > i) parts.push(text.slice(i, at));
    parts.push(<mark key={`${keyBase}-${at}`}>{text.slice(at, at + q.length)}</mark>);
    i = at + q.length;
  }
  if (parts.length === 0) return text;
  if (i < text.length) parts.push(text.slice(i));
  return parts;
}

/**
 * A line longer than MAX_LINE_CHARS is drawn cut, with a "show all" control; shown whole it is one
 * plain text node (no colours, no search marks: a 10 MB line as one node stays cheap to draw).
 */
export const LogText = memo(function LogText({ text, query }: { text: string; query: string | null }) {
  const [all, setAll] = useState(false);
  const long = text.length > MAX_LINE_CHARS;
  if (long && all) {
    return (
      <>
        {/* First: at the end of a 10 MB line the control would be out of reach. */}
        <button type="button" className="log-trunc btn-link" onClick={() => setAll(false)}>
          show less
        </button>{' '}
        <span data-testid="log-line-whole">{text}</span>
      </>
    );
  }
  const shown = long ? text.slice(0, MAX_LINE_CHARS) : text;
  const spans = ansiToSpans(shown);
  const q = query ? query.toLowerCase() : null;
  return (
    <>
      {spans.map((s, i) =>
        s.className || s.style ? (
          <span key={i} className={s.className} style={s.style}>
            {highlight(s.text, q, String(i))}
          </span>
        ) : (
          <span key={i}>{highlight(s.text, q, String(i))}</span>
        ),
      )}
      {long && (
        <span className="log-trunc">
          {' '}
          … {(text.length - MAX_LINE_CHARS).toLocaleString('en-US')} more characters{' '}
          <button type="button" className="btn-link" onClick={() => setAll(true)} data-testid="log-line-show-all">
            show all
          </button>{' '}
          (or download the raw log)
        </span>
      )}
    </>
  );
});
