/**
 * `jobdeck logs --grep PATTERN [-i] [--regex] [-s STATUS]… [--jobs-named TEXT] [--since T]
 * [--until T] [--metadata K=V]… [--owner NAME] [--limit N] [--jobs N]`: the lines matching
 * PATTERN in the logs of the jobs the filter selects (the filter of `jobdeck queue`; the newest
 * `--jobs`), printed as the server finds them
 * (`job 12 · task 0 · attempt 1 · line 34: …`), then a summary on stderr. GET /api/logs/grep
 * (docs/design.md "Log search"): the server bounds results, jobs and time; Ctrl-C stops it.
 */
import type { CliContext } from '../context';
import { usageError } from '../errors';
import { EXIT } from '../exit-codes';
import { terminalSafe } from '../terminal-safe';
import { parseMetadataPairs, parseOwner, parseStatuses } from './queue';

/** The `logs` options a search reads. */
export interface GrepOptions {
  grep?: string;
  ignoreCase?: boolean;
  regex?: boolean;
  status?: string[];
  jobsNamed?: string;
  since?: string;
  until?: string;
  /** `key=value` pairs the job's metadata must all hold (repeatable). */
  metadata?: string[];
  /** Only this submitter's jobs ("me" or a user name). */
  owner?: string;
  limit?: string;
  jobs?: string;
  raw?: boolean;
}

interface GrepLine {
  type: 'match' | 'end' | 'error';
  jobId?: number;
  task?: number;
  attempt?: number;
  line?: number;
  text?: string;
  cut?: boolean;
  matches?: number;
  jobs?: number;
  files?: number;
  reason?: string;
  engine?: string;
  elapsedMs?: number;
  message?: string;
}

/** The action of `logs --grep`. Answers 0 when something matched, 1 when nothing did (grep's convention). */
export async function grepAction(ctx: CliContext, opts: GrepOptions): Promise<number> {
  const pattern = opts.grep ?? '';
  if (!pattern) throw usageError('--grep needs a pattern (jobdeck logs --grep "disk full")');
  const q = new URLSearchParams({ pattern });
  if (opts.ignoreCase) q.set('ignoreCase', '1');
  if (opts.regex) q.set('regex', '1');
  for (const s of parseStatuses(opts.status ?? [])) q.append('status', s);
  if (opts.jobsNamed) q.set('q', opts.jobsNamed);
  if (opts.since) q.set('submittedAfter', opts.since);
  if (opts.until) q.set('submittedBefore', opts.until);
  for (const m of parseMetadataPairs(opts.metadata ?? [])) q.append('metadata', m);
  const owner = parseOwner(opts.owner);
  if (owner) q.set('owner', owner);
  if (opts.limit) q.set('limit', opts.limit);
  if (opts.jobs) q.set('jobs', opts.jobs);
  const client = await ctx.client();
  let end: GrepLine | null = null;
  let buf = '';
  const dim = ctx.outColors.dim;
  const onLine = (raw: string) => {
    if (!raw) return;
    const m = JSON.parse(raw) as GrepLine;
    if (m.type === 'match') {
      const text = opts.raw ? m.text! : terminalSafe(m.text!);
      ctx.out(`${dim(`job ${m.jobId} · task ${m.task} · attempt ${m.attempt} · line ${m.line}:`)} ${text}${m.cut ? dim(' … (line cut)') : ''}`);
    } else end = m;
  };
  const decoder = new TextDecoder();
  const sink = {
    write(chunk: Uint8Array): boolean {
      buf += decoder.decode(chunk, { stream: true });
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        onLine(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
      return true;
    },
    once(): void {},
  };
  await client.download(`/api/logs/grep?${q}`, sink);
  onLine(buf);
  const e = end as GrepLine | null;
  if (!e) return EXIT.INTERNAL;
  if (e.type === 'error') {
    ctx.err(ctx.errColors.red(`log search failed: ${e.message}`));
    return EXIT.INTERNAL;
  }
  const why = e.reason === 'limit' ? ` — stopped at ${e.matches} (--limit)` : e.reason === 'time' ? ' — stopped: the search ran out of time' : '';
  ctx.err(ctx.errColors.dim(`${e.matches} match${e.matches === 1 ? '' : 'es'} in the logs of ${e.jobs} job${e.jobs === 1 ? '' : 's'} (${e.files} files, ${e.engine}, ${e.elapsedMs} ms)${why}.`));
  return e.matches ? EXIT.OK : 1;
}
