'use client';
/**
 * "Search logs" on the jobs list: the lines matching a text in the logs of the jobs the list's
 * filter shows (its status chips, name search, queue and owner: the list's own query
 * parameters), as the server finds them, with a Stop button (lib/ui/log-grep.ts, GET
 * /api/logs/grep). A line is shown cut at 2000 characters.
 */
import Link from 'next/link';
import { useRef, useState, type FormEvent } from 'react';
import type { ListFilterFields } from '@/lib/ui/api';
import { runLogGrep, type LogGrepEnd, type LogGrepMatch } from '@/lib/ui/log-grep';

/** Matches kept on the page (the server sends at most 100 by default). */
const SHOWN = 1000;

export function LogSearch({ filter }: { filter: ListFilterFields }) {
  const [pattern, setPattern] = useState('');
  const [ignoreCase, setIgnoreCase] = useState(true);
  const [matches, setMatches] = useState<LogGrepMatch[]>([]);
  const [end, setEnd] = useState<LogGrepEnd | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [running, setRunning] = useState(false);
  const abort = useRef<AbortController | null>(null);

  const search = async (e: FormEvent) => {
    e.preventDefault();
    if (!pattern.trim()) return;
    abort.current?.abort();
    const ac = new AbortController();
    abort.current = ac;
    setMatches([]);
    setEnd(null);
    setError(null);
    setRunning(true);
    const found: LogGrepMatch[] = [];
    let flush = 0;
    try {
      const r = await runLogGrep({ pattern, ignoreCase, filter }, (m) => {
        if (found.length < SHOWN) found.push(m);
        // Batched: one render per animation frame however fast matches come.
        if (!flush) flush = requestAnimationFrame(() => ((flush = 0), setMatches([...found])));
      }, ac.signal);
      setEnd(r);
    } catch (err) {
      if ((err as Error).name !== 'AbortError') setError((err as Error).message);
    } finally {
      if (flush) cancelAnimationFrame(flush);
      setMatches([...found]);
      if (abort.current === ac) setRunning(false);
    }
  };

  return (
    <section className="card log-search" aria-label="Search logs" data-testid="logs-grep">
      <form onSubmit={(e) => void search(e)} className="toolbar">
        <label className="search" style={{ flex: 1 }}>
          <span className="visually-hidden">Search the logs of these jobs</span>
          <input className="input" type="search" placeholder="Search the logs of these jobs…" value={pattern} maxLength={200} onChange={(e) => setPattern(e.target.value)} style={{ width: '100%' }} data-testid="logs-grep-input" />
        </label>
        <label className="muted" style={{ fontSize: 12.5 }}>
          <input type="checkbox" checked={ignoreCase} onChange={(e) => setIgnoreCase(e.target.checked)} /> any case
        </label>
        <button type="submit" className="btn btn-sm" disabled={!pattern.trim() || running}>
          Search logs
        </button>
        {running && (
          <button type="button" className="btn btn-sm btn-ghost" onClick={() => abort.current?.abort()}>
            Stop
          </button>
        )}
      </form>
      {error && <div className="alert alert-error">{error}</div>}
      {(matches.length > 0 || end) && (
        <ol className="log-search-results" data-testid="logs-grep-results">
          {matches.map((m, i) => (
            <li key={i}>
              <Link prefetch={false} href={`/jobs/${m.jobId}`}>
                #{m.jobId} · task {m.task} · attempt {m.attempt} · line {m.line}
              </Link>{' '}
              <code>{m.text}</code>
              {m.cut && <span className="muted"> … (line cut)</span>}
            </li>
          ))}
        </ol>
      )}
      {end && (
        <p className="muted" role="status" data-testid="logs-grep-summary">
          {end.matches} match{end.matches === 1 ? '' : 'es'} in the logs of {end.jobs} job{end.jobs === 1 ? '' : 's'} ({end.elapsedMs} ms){end.reason === 'limit' ? ' — the first ones only' : end.reason === 'time' ? ' — stopped: out of time' : ''}
        </p>
      )}
    </section>
  );
}
