'use client';
/**
 * The log viewer's bar: what is shown (the attempt in view, or the one attempt it is narrowed
 * to, with the way back to the whole job), search, wrap, times and follow toggles, and the raw
 * downloads, each named by what it saves: this attempt, or the whole job.
 */
import { downloadUrl, jobLogUrl } from '@/lib/ui/api';
import type { AttemptKey } from '@/lib/ui/log-view';

/** The search state the bar shows and drives (components/job/useLogSearch.ts). */
export interface SearchBar {
  query: string;
  setQuery: (q: string) => void;
  q: string;
  matches: number[];
  index: number;
  go: (dir: 1 | -1) => void;
}

function SearchForm({ s }: { s: SearchBar }) {
  const count = s.q ? (s.matches.length ? (s.index >= 0 ? `${s.index + 1}/${s.matches.length}` : `${s.matches.length.toLocaleString('en-US')} found`) : 'no match') : '';
  return (
    <form
      className="logs-search"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        s.go(1);
      }}
    >
      <label>
        <span className="visually-hidden">Search the log</span>
        <input
          className="input"
          type="search"
          placeholder="Search log…"
          value={s.query}
          onChange={(e) => s.setQuery(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              s.go(e.shiftKey ? -1 : 1);
            }
          }}
          aria-describedby="log-search-help"
          data-testid="log-search"
        />
      </label>
      <span id="log-search-help" className="visually-hidden">
        Enter: next match. Shift+Enter: previous match.
      </span>
      <span className="match-count" aria-live="polite" data-testid="match-count" title={s.q && s.matches.length && s.index < 0 ? 'Press Enter to go to the first match' : undefined}>
        {count}
      </span>
      <button type="button" className="btn btn-sm btn-icon" aria-label="Previous match" title="Previous match (Shift+Enter)" disabled={!s.matches.length} onClick={() => s.go(-1)}>
        ↑
      </button>
      <button type="submit" className="btn btn-sm btn-icon" aria-label="Next match" title="Next match (Enter)" disabled={!s.matches.length}>
        ↓
      </button>
    </form>
  );
}

/**
 * Which rank's lines of multi-node attempts are shown: every rank's, interleaved and each line
 * prefixed with its rank, or one rank's.
 */
function RankSelect({ nodes, rank, onRank }: { nodes: number; rank: number | null; onRank: (r: number | null) => void }) {
  return (
    <label className="logs-rank" title="A multi-node task writes one log per node (rank): every rank's lines, each prefixed with its rank, or one rank's">
      <span className="visually-hidden">Rank</span>
      <select className="select" value={rank === null ? 'all' : String(rank)} onChange={(e) => onRank(e.target.value === 'all' ? null : Number(e.target.value))} data-testid="log-rank-select">
        <option value="all">All ranks</option>
        {Array.from({ length: nodes }, (_, k) => (
          <option key={k} value={String(k)}>
            {k === 0 ? 'Rank 0 (head)' : `Rank ${k}`}
          </option>
        ))}
      </select>
    </label>
  );
}

/**
 * The raw downloads, each saying what it saves: the attempt in view (of one rank of a multi-node
 * attempt; named in its tooltip and accessible name) and the whole job — every task and attempt
 * in order, each under a header line. One "Download" label before both keeps the bar short.
 */
function Download({ jobId, target, rank }: { jobId: number; target: AttemptKey | null; rank: number }) {
  const what = target ? `attempt ${target.attempt} of task ${target.task}${rank > 0 ? `, rank ${rank}` : ''}` : '';
  return (
    <span className="log-downloads" role="group" aria-label="Download the raw log">
      <span className="log-downloads-label" aria-hidden="true">
        Download
      </span>
      {target ? (
        <a className="btn btn-sm log-download" href={downloadUrl(jobId, target.task, target.attempt, rank)} download data-testid="log-download" title={`Download this attempt: the raw log file of ${what}, the bytes exactly as written`}>
          <span className="visually-hidden">Download </span>this attempt<span className="visually-hidden"> ({what})</span>
        </a>
      ) : (
        <button type="button" className="btn btn-sm" disabled title="Nothing to download yet">
          <span className="visually-hidden">Download </span>this attempt
        </button>
      )}
      <a className="btn btn-sm log-download-job" href={jobLogUrl(jobId)} download data-testid="log-download-job" title="Download the whole job: every task and attempt in order, each under a header line (multi-node attempts: every rank's log)">
        <span className="visually-hidden">Download </span>whole job
      </a>
    </span>
  );
}

export function LogToolbar({ jobId, scope, narrowed, onShowAll, search, ended, following, onFollow, wrap, onWrap, times, onTimes, download, ranks }: { jobId: number; scope: string; narrowed: boolean; onShowAll: () => void; search: SearchBar; ended: boolean; following: boolean; onFollow: () => void; wrap: boolean; onWrap: () => void; times: boolean; onTimes: () => void; download: AttemptKey | null; ranks: { nodes: number; rank: number | null; onRank: (r: number | null) => void; downloadRank: number } }) {
  return (
    <div className="logs-bar">
      <h2 id="logs-title">Logs</h2>
      <span className="logs-scope" data-testid="log-scope">
        {scope}
      </span>
      {narrowed && (
        <button type="button" className="btn btn-sm" onClick={onShowAll} data-testid="log-show-all" title="Show every task and attempt again">
          Whole job
        </button>
      )}
      <span className="grow" />
      {ranks.nodes > 1 && <RankSelect nodes={ranks.nodes} rank={ranks.rank} onRank={ranks.onRank} />}
      <SearchForm s={search} />
      <button type="button" className="btn btn-sm" aria-pressed={wrap} onClick={onWrap} data-testid="log-wrap" title={wrap ? 'Long lines wrap (click to scroll them sideways instead)' : 'Wrap long lines'}>
        Wrap
      </button>
      <button type="button" className="btn btn-sm" aria-pressed={times} onClick={onTimes} data-testid="log-times" title={times ? 'Showing when each line was written (t to hide)' : 'Show when each line was written (t)'}>
        Times
      </button>
      {ended ? (
        <span className="follow-state" data-state="ended" data-testid="follow" title="The job finished: every line has arrived, nothing more to follow">
          Ended
        </span>
      ) : (
        <button type="button" className="btn btn-sm follow-btn" aria-pressed={following} data-testid="follow" data-state={following ? 'following' : 'paused'} onClick={onFollow} title={following ? 'Following new lines as they arrive (f or click to pause)' : 'Follow new lines as they arrive (f)'}>
          {following ? 'Following' : 'Follow'}
        </button>
      )}
      <Download jobId={jobId} target={download} rank={ranks.downloadRank} />
    </div>
  );
}
