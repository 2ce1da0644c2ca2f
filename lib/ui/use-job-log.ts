/**
 * The log a job page shows: the job stream's whole log (useJobStream), or — for a job whose logs
 * are long — the end of its latest attempt first, while the whole log loads unseen behind it
 * (lib/ui/tail-preview.ts; docs/design.md §8 "Long logs in the browser"). Client components only.
 */
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import type { JobDetail, LogRange } from '../api/types';
import { api } from './api';
import type { ConnectionState } from './connection';
import { jobKey, useJobStream } from './hooks';
import type { LogBuffer } from './log-buffer';
import { PREVIEW_MIN_BYTES, previewStart, TailPreview } from './tail-preview';

/** What the page shows of a preview: how much of the whole log has loaded behind it (bytes). */
export interface PreviewInfo {
  loadedBytes: number;
}

/** The shown log: its buffer and version, its stream's state, and the preview's progress (null: the whole log is shown). */
export interface JobLog {
  buffer: LogBuffer;
  version: number;
  state: ConnectionState | 'idle';
  restarting: boolean;
  ended: boolean;
  preview: PreviewInfo | null;
}

/** How often the "loading the earlier lines" progress is drawn again while a preview shows (ms). */
const PROGRESS_MS = 250;

/** How long the whole log waits for the preview's first lines before it opens anyway (ms). */
const PREVIEW_GRACE_MS = 2000;

/**
 * Follows job `jobId`; `job` is its detail once loaded. The latest attempt's log length (GET
 * …/logs?limit=1, asked once the detail says the job has a log: for a job with no attempt yet it
 * answers 404, an error in the browser's console) decides whether the page opens with the end,
 * once; the job stream of the whole log opens after the preview's first lines (they would otherwise queue behind its
 * frames) or at once for a short log. Mount once per job (key the component by job id).
 */
export function useJobLog(jobId: number, job: JobDetail | undefined): JobLog {
  const qc = useQueryClient();
  const hold = useRef(false);
  const [phase, setPhase] = useState<'deciding' | 'preview' | 'whole'>('deciding');
  const [previewReady, setPreviewReady] = useState(false);
  const main = useJobStream(jobId, hold, phase === 'whole' || (phase === 'preview' && previewReady));
  const mainRef = useRef(main);
  mainRef.current = main;
  const [preview, setPreview] = useState<TailPreview | null>(null);
  const [previewVersion, setPreviewVersion] = useState(0);
  const [previewState, setPreviewState] = useState<{ state: ConnectionState | 'idle'; restarting: boolean }>({ state: 'idle', restarting: false });
  const [loaded, setLoaded] = useState(0);

  const range = useLatestLogRange(jobId, job, phase === 'deciding');

  // Decide once, on the latest attempt's length: the end first for a long log, else the whole log
  // from its start at once.
  useEffect(() => {
    if (phase !== 'deciding' || range === null) return;
    const start = range !== 'none' && range.size >= PREVIEW_MIN_BYTES ? previewStart(range) : null;
    if (!start) {
      setPhase('whole');
      return;
    }
    hold.current = true;
    setPreview(new TailPreview(jobId, start));
    setPhase('preview');
  }, [phase, range, jobId]);

  // A multi-node attempt's ranks are streamed in turn, each from its own offset: no preview once
  // the detail says the task runs on several nodes.
  const multiNode = (job?.tasks[job.currentTask]?.nodes ?? 1) > 1;
  useEffect(() => {
    if (!multiNode || !preview) return;
    hold.current = false;
    setPreviewReady(true);
    setPreview(null);
  }, [multiNode, preview]);

  // The preview's stream, while it shows.
  useEffect(() => {
    if (!preview) return;
    let frame = 0;
    let refetch: ReturnType<typeof setTimeout> | null = null;
    const grace = setTimeout(() => setPreviewReady(true), PREVIEW_GRACE_MS);
    preview.listen({
      onChange: () => {
        if (frame) return;
        frame = requestAnimationFrame(() => {
          frame = 0;
          setPreviewVersion((v) => v + 1);
          if (preview.buffer.lineCount > 0 || preview.ended) setPreviewReady(true);
        });
      },
      onState: (state, restarting) => {
        setPreviewState({ state, restarting });
        if (state === 'failed' || state === 'closed') setPreviewReady(true);
      },
      // The whole log's stream is still in the past: the page's view of the job follows this one's news.
      onControl: (msg) => {
        if (msg.type === 'hello' || refetch) return;
        refetch = setTimeout(() => {
          refetch = null;
          void qc.invalidateQueries({ queryKey: jobKey(jobId) });
        }, 150);
      },
    });
    preview.start();
    return () => {
      preview.stop();
      clearTimeout(grace);
      if (frame) cancelAnimationFrame(frame);
      if (refetch) clearTimeout(refetch);
    };
  }, [preview, jobId, qc]);

  // The whole log takes over once it holds every byte the preview showed.
  useEffect(() => {
    if (!preview || !previewReady) return;
    const m = mainRef.current;
    let timer: ReturnType<typeof setTimeout> | null = null;
    let done = false;
    const check = () => {
      if (done) return;
      const at = mainRef.current.position();
      if (!at || !preview.overtakenBy(at)) {
        timer ??= setTimeout(() => {
          timer = null;
          setLoaded(m.buffer.bytesIn);
        }, PROGRESS_MS);
        return;
      }
      done = true;
      hold.current = false;
      setPreview(null);
      mainRef.current.refresh();
    };
    const unsub = m.buffer.subscribe(check);
    return () => {
      unsub();
      if (timer) clearTimeout(timer);
    };
  }, [preview, previewReady]);

  if (preview) return { buffer: preview.buffer, version: previewVersion, state: previewState.state, restarting: previewState.restarting, ended: preview.ended, preview: { loadedBytes: loaded } };
  return { buffer: main.buffer, version: main.version, state: main.state, restarting: main.restarting, ended: main.ended, preview: null };
}

/**
 * The latest attempt's log range of job `jobId` (GET …/logs?limit=1: its size), asked while
 * `asking` once the detail `job` says the job has a log at all ('none': no log, or none to read;
 * null: not known yet).
 */
function useLatestLogRange(jobId: number, job: JobDetail | undefined, asking: boolean): LogRange | 'none' | null {
  const [range, setRange] = useState<LogRange | 'none' | null>(null);
  const known = job !== undefined;
  const hasLog = (job?.logBytesTotal ?? 0) > 0;
  useEffect(() => {
    if (!known || !asking) return;
    if (!hasLog) {
      setRange('none');
      return;
    }
    const ctrl = new AbortController();
    api.logRange(jobId, 1, ctrl.signal).then(setRange, () => {
      // No attempt yet, or no log: nothing long to show the end of.
      if (!ctrl.signal.aborted) setRange('none');
    });
    return () => ctrl.abort();
  }, [jobId, known, hasLog, asking]);
  return range;
}
