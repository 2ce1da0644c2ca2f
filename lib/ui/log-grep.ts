/**
 * The dashboard's cross-job log search (GET /api/logs/grep, docs/design.md "Log search"): reads
 * the NDJSON answer as it streams and hands each match to `onMatch`; abort with `signal`.
 */
import { listFilterParams, type ListFilterFields } from './api';

/** One matching line, as the API sends it. */
export interface LogGrepMatch {
  jobId: number;
  task: number;
  attempt: number;
  line: number;
  text: string;
  cut: boolean;
}

/** The search's last line: how it ended. */
export interface LogGrepEnd {
  matches: number;
  jobs: number;
  files: number;
  reason: 'done' | 'limit' | 'time';
  engine: string;
  elapsedMs: number;
}

/** The query of a search: the pattern and the list's filter (its fields as the list sends them). */
export interface LogGrepQuery {
  pattern: string;
  ignoreCase: boolean;
  filter: ListFilterFields;
}

/**
 * Runs a search, calling `onMatch` per match as it arrives. @returns the end line.
 * @throws Error with the server's message (400: the field it names), or an AbortError.
 */
export async function runLogGrep(query: LogGrepQuery, onMatch: (m: LogGrepMatch) => void, signal: AbortSignal): Promise<LogGrepEnd> {
  const p = listFilterParams(query.filter);
  p.set('pattern', query.pattern);
  if (query.ignoreCase) p.set('ignoreCase', '1');
  const res = await fetch(`/api/logs/grep?${p}`, { credentials: 'same-origin', signal });
  if (!res.ok || !res.body) {
    const body = (await res.json().catch(() => null)) as { detail?: string } | null;
    throw new Error(body?.detail ?? `the log search failed (HTTP ${res.status})`);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let end: LogGrepEnd | null = null;
  const take = (line: string) => {
    if (!line) return;
    const m = JSON.parse(line) as { type: string; message?: string } & Partial<LogGrepMatch> & Partial<LogGrepEnd>;
    if (m.type === 'match') onMatch(m as LogGrepMatch);
    else if (m.type === 'end') end = m as LogGrepEnd;
    else if (m.type === 'error') throw new Error(m.message ?? 'the log search failed');
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      take(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  }
  take(buf);
  if (!end) throw new Error('the log search ended without its summary');
  return end;
}
