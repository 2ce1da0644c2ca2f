/**
 * React hooks of the dashboard's data layer: @tanstack/react-query holds server data (job list
 * pages, job details); WebSocket pushes (list stream, job stream) update that cache — no polling
 * loops (after a reconnect, queries are invalidated once to catch up). Client components only.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import type { JobDetail, JobList, JobSummary, ListMessage, StreamMessage } from '../api/types';
import { isTerminal } from '../jobs/status';
import { api, type QueueSettingsInput } from './api';
import { connectionSnapshot, reportConnection, serverConnectionSnapshot, subscribeConnections, type ConnectionState } from './connection';
import { JobStream, pageWsBase } from './job-stream';
import { applyListMessage, listKey, mergeFetchedPage, type ListFilter } from './list-cache';
import { LogBuffer } from './log-buffer';
import type { StreamPosition } from './resume';
import { ReconnectingSocket } from './socket';

/**
 * The list-stream messages applied lately, oldest first, each with its sequence number: a list
 * fetch replays those that arrived while it was in flight (list-cache mergeFetchedPage). Bounded
 * to RECENT_MAX messages; a fetch that saw more than that arrive is followed by another fetch.
 */
let streamClock = 0;
const recent: { at: number; msg: ListMessage }[] = [];
const RECENT_MAX = 5000;

/** The messages applied after sequence number `clock`, or null when some were already dropped. */
function messagesSince(clock: number): ListMessage[] | null {
  if (recent.length && recent[0].at > clock + 1) return null;
  let i = recent.length;
  while (i > 0 && recent[i - 1].at > clock) i--;
  return recent.slice(i).map((r) => r.msg);
}

/** Query key of a job's detail. */
export const jobKey = (id: number) => ['jobs', 'detail', id] as const;

/** One page of the jobs list (kept while the next page loads). */
export function useJobList(filter: ListFilter) {
  const qc = useQueryClient();
  return useQuery({
    queryKey: listKey(filter),
    // The list-stream messages that arrived while this fetch was in flight are replayed on top of
    // its answer, and a job the stream already showed ended stays ended (list-cache mergeFetchedPage).
    queryFn: async ({ signal }) => {
      const began = streamClock;
      const fresh = await api.listJobs(filter, signal);
      const since = messagesSince(began);
      // More messages came than are kept: this answer may be stale in ways a replay cannot fix.
      if (since === null) setTimeout(() => void qc.invalidateQueries({ queryKey: listKey(filter), exact: true }), 0);
      return mergeFetchedPage(qc.getQueryData<JobList>(listKey(filter)), fresh, filter, since ?? []);
    },
    placeholderData: keepPreviousData,
  });
}

/** Query key of the status counts for a search (and queue): ['jobs', 'counts', q, queue]. */
const countsKey = (q: string, queue: string) => ['jobs', 'counts', q, queue] as const;

/**
 * Jobs per status among those the search finds (GET /api/jobs/counts), for the filter chips.
 * Kept fresh by the list stream: each message marks the counts stale, at most once a second.
 */
export function useJobCounts(q: string, queue = '') {
  return useQuery({ queryKey: countsKey(q, queue), queryFn: ({ signal }) => api.counts(q, queue, signal), placeholderData: keepPreviousData });
}

/** How often the queues page reads the queues again (ms): what they hold changes with every job. */
const QUEUES_REFRESH_MS = 2000;

/** The operator queues (GET /api/queues), read again every QUEUES_REFRESH_MS while shown. */
export function useQueues() {
  return useQuery({ queryKey: ['queues'], queryFn: ({ signal }) => api.queues(signal), refetchInterval: QUEUES_REFRESH_MS });
}

/** Creates or replaces a queue, then reads the queues again. */
export function usePutQueue() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (v: { name: string; settings: QueueSettingsInput }) => api.putQueue(v.name, v.settings),
    onSettled: () => void qc.invalidateQueries({ queryKey: ['queues'] }),
  });
}

/** Deletes a queue (refused while an unfinished job is in it), then reads the queues again. */
export function useDeleteQueue() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => api.deleteQueue(name),
    onSettled: () => void qc.invalidateQueries({ queryKey: ['queues'] }),
  });
}

/** How often list-stream messages may refresh the status counts (ms). */
const COUNTS_REFRESH_MS = 1000;
let countsTimer: ReturnType<typeof setTimeout> | null = null;

/** Marks the counts stale soon (once per COUNTS_REFRESH_MS however many messages come). */
function refreshCountsSoon(qc: QueryClient): void {
  if (countsTimer) return;
  countsTimer = setTimeout(() => {
    countsTimer = null;
    void qc.invalidateQueries({ queryKey: ['jobs', 'counts'] });
  }, COUNTS_REFRESH_MS);
}

/**
 * How often a live job's detail is read again (ms): the stream pushes status changes, not the
 * resource usage the sampler adds every few seconds (the attempt sparklines).
 */
export const LIVE_JOB_REFRESH_MS = 10_000;

/** A job's detail (tasks, attempts, events, masked spec); `enabled` false skips the fetch. */
export function useJob(id: number, enabled = true) {
  return useQuery({
    queryKey: jobKey(id),
    queryFn: ({ signal }) => api.getJob(id, signal),
    enabled,
    refetchInterval: (q) => (q.state.data && !isTerminal('job', q.state.data.status) ? LIVE_JOB_REFRESH_MS : false),
    retry: (n, err) => n < 2 && !(err && typeof err === 'object' && 'status' in err && (err as { status: number }).status === 404),
  });
}

/** Patches a cached job detail with a job summary (status, times, counters) from a push. */
function mergeSummary(old: JobDetail | undefined, job: JobSummary): JobDetail | undefined {
  if (!old) return old;
  const { tasks, ...rest } = job;
  const byIndex = new Map(tasks.map((t) => [t.index, t]));
  return { ...old, ...rest, tasks: old.tasks.map((t) => ({ ...t, ...(byIndex.get(t.index) ?? {}) })) };
}

/** Applies a list-stream message to every cached list page (and marks a cached detail stale). */
export function applyListMessageToCache(qc: QueryClient, msg: ListMessage): void {
  recent.push({ at: ++streamClock, msg });
  if (recent.length > RECENT_MAX) recent.splice(0, recent.length - RECENT_MAX);
  for (const [key, page] of qc.getQueriesData<JobList>({ queryKey: ['jobs', 'list'] })) {
    if (!page) continue;
    const filter = key[2] as ListFilter;
    const next = applyListMessage(page, filter, msg);
    if (next === 'refetch') void qc.invalidateQueries({ queryKey: key, exact: true });
    else if (next !== page) qc.setQueryData(key, next);
  }
  refreshCountsSoon(qc);
  const id = msg.type === 'deleted' ? msg.jobId : msg.job.id;
  if (msg.type === 'updated') qc.setQueryData<JobDetail>(jobKey(id), (old) => mergeSummary(old, msg.job));
  if (msg.type === 'deleted') void qc.invalidateQueries({ queryKey: jobKey(id) });
}

/**
 * Keeps the list stream `/ws/jobs` open while mounted (once per app): created/updated/deleted
 * jobs patch the cached list pages; a reconnect refetches the lists once.
 */
export function useListStream(): void {
  const qc = useQueryClient();
  useEffect(() => {
    const sock = new ReconnectingSocket({
      url: () => `${pageWsBase()}/ws/jobs`,
      onMessage: (d) => {
        if (typeof d !== 'string') return;
        let msg: ListMessage;
        try {
          msg = JSON.parse(d) as ListMessage;
        } catch {
          return;
        }
        if (msg && (msg.type === 'created' || msg.type === 'updated' || msg.type === 'deleted')) applyListMessageToCache(qc, msg);
      },
      // The protocol: open the socket, then GET the list — so every (re)connection refetches
      // the cached lists (and counts) once; messages after that are applied on top.
      onOpen: () => {
        void qc.invalidateQueries({ queryKey: ['jobs', 'list'] });
        void qc.invalidateQueries({ queryKey: ['jobs', 'counts'] });
      },
      onState: (state, info) => reportConnection('list', state, info),
    });
    sock.start();
    const online = () => sock.reconnectNow();
    window.addEventListener('online', online);
    return () => {
      window.removeEventListener('online', online);
      sock.stop();
      reportConnection('list', 'closed');
    };
  }, [qc]);
}

/** The connection indicator's state (all sockets of the page). */
export function useConnection() {
  return useSyncExternalStore(subscribeConnections, connectionSnapshot, serverConnectionSnapshot);
}

/** Applies a job-stream control message to the cached job detail. */
function patchDetail(old: JobDetail | undefined, msg: StreamMessage): JobDetail | undefined {
  if (!old) return old;
  switch (msg.type) {
    case 'hello':
      return mergeSummary(old, msg.job);
    case 'job':
      return { ...old, status: msg.status, statusReason: msg.reason };
    case 'end':
      return { ...old, status: msg.status };
    case 'task':
      return { ...old, tasks: old.tasks.map((t) => (t.index === msg.task ? { ...t, status: msg.status, statusReason: msg.reason } : t)) };
    case 'attempt':
      return {
        ...old,
        tasks: old.tasks.map((t) => {
          if (t.index !== msg.task) return t;
          const list = t.attemptList.slice();
          const i = list.findIndex((a) => a.number === msg.attempt);
          const base = i >= 0 ? list[i] : { number: msg.attempt, cause: msg.cause, executor: old.executor, nodes: null, createdAt: msg.at, startedAt: msg.at, endedAt: null, logBytes: 0, usage: null, gpus: null, osUser: null, logLostBytes: null, reason: null, exitCode: null, status: msg.status };
          const next = { ...base, status: msg.status, exitCode: msg.exitCode ?? base.exitCode, reason: msg.reason ?? base.reason, endedAt: msg.phase === 'end' ? msg.at : base.endedAt };
          if (i >= 0) list[i] = next;
          else list.push(next);
          return { ...t, attemptList: list, attempts: Math.max(t.attempts, list.length) };
        }),
      };
    default:
      return old;
  }
}

/**
 * Follows a job's live story over `/ws/jobs/:id` into a LogBuffer (one per job page), patching
 * the cached detail from control messages and refetching it (coalesced) for the full picture.
 * Returns the buffer, its version (re-render trigger, at most once per animation frame), the
 * stream and its state (`restarting`: the server said it is restarting, lib/ui/socket.ts), and
 * `position()`: the next byte the stream wants. While `hold.current` is true the version stays
 * put (the buffer still fills: a tail preview is shown meanwhile, lib/ui/use-job-log.ts);
 * `refresh()` catches it up. The stream opens once `enabled` (default true). Mount once per job
 * (key the component by job id).
 */
export function useJobStream(jobId: number, hold?: { readonly current: boolean }, enabled = true): { buffer: LogBuffer; version: number; stream: JobStream | null; state: ConnectionState | 'idle'; restarting: boolean; ended: boolean; position: () => StreamPosition | null; refresh: () => void } {
  const qc = useQueryClient();
  const [buffer] = useState(() => new LogBuffer());
  const [version, setVersion] = useState(0);
  const streamRef = useRef<JobStream | null>(null);
  // Where a stopped stream left off (React may stop and restart effects): a new stream resumes
  // there, so the buffer never receives a byte twice.
  const posRef = useRef<StreamPosition | undefined>(undefined);
  const [state, setState] = useState<ConnectionState | 'idle'>('idle');
  const [restarting, setRestarting] = useState(false);
  const [ended, setEnded] = useState(false);

  useEffect(() => {
    if (!enabled) return;
    let frame = 0;
    const unsub = buffer.subscribe(() => {
      if (frame || hold?.current) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        setVersion(buffer.version);
      });
    });
    let refetchTimer: ReturnType<typeof setTimeout> | null = null;
    const refetchSoon = () => {
      if (refetchTimer) return;
      refetchTimer = setTimeout(() => {
        refetchTimer = null;
        void qc.invalidateQueries({ queryKey: jobKey(jobId) });
      }, 150);
    };
    const stream = new JobStream({
      jobId,
      buffer,
      start: posRef.current,
      onControl: (msg) => {
        qc.setQueryData<JobDetail>(jobKey(jobId), (old) => patchDetail(old, msg));
        if (msg.type !== 'hello' && msg.type !== 'error') refetchSoon();
        if (msg.type === 'end') setEnded(true);
      },
      onReconnect: () => refetchSoon(),
      onState: (st, info) => {
        setState(st);
        setRestarting(info.restarting);
      },
    });
    streamRef.current = stream;
    stream.start();
    const online = () => stream.reconnectNow();
    window.addEventListener('online', online);
    return () => {
      window.removeEventListener('online', online);
      unsub();
      if (frame) cancelAnimationFrame(frame);
      if (refetchTimer) clearTimeout(refetchTimer);
      stream.stop();
      posRef.current = stream.tracker.position;
      reportConnection(`job:${jobId}`, 'closed');
      streamRef.current = null;
    };
  }, [jobId, buffer, qc, enabled]);

  return { buffer, version, stream: streamRef.current, state, restarting, ended, position: () => streamRef.current?.tracker.position ?? posRef.current ?? null, refresh: () => setVersion(buffer.version) };
}

/** Cancel one job. */
export function useCancelJob() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => api.cancel(id),
    onSettled: (_r, _e, id) => {
      void qc.invalidateQueries({ queryKey: jobKey(id) });
      void qc.invalidateQueries({ queryKey: ['jobs', 'list'] });
    },
  });
}

/** Change a PENDING job's priority (PATCH); the admission pass reorders its line at once. */
export function useSetPriority() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (v: { id: number; priority: number }) => api.setPriority(v.id, v.priority),
    onSettled: (_r, _e, v) => {
      void qc.invalidateQueries({ queryKey: jobKey(v.id) });
      void qc.invalidateQueries({ queryKey: ['jobs', 'list'] });
    },
  });
}

/** Cancel several jobs (bulk). */
export function useCancelJobs() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (ids: number[]) => api.cancelMany(ids),
    onSettled: () => void qc.invalidateQueries({ queryKey: ['jobs'] }),
  });
}

/** Delete a terminal job. */
export function useDeleteJob() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => api.remove(id),
    onSuccess: (_r, id) => {
      qc.removeQueries({ queryKey: jobKey(id) });
      applyListMessageToCache(qc, { type: 'deleted', jobId: id });
    },
    onSettled: () => void qc.invalidateQueries({ queryKey: ['jobs', 'list'] }),
  });
}

/** What a bulk delete did: the jobs deleted, and those refused (still running, gone…) with why. */
export interface BulkOutcome {
  done: number[];
  refused: { id: number; why: string }[];
}

/**
 * Delete several finished jobs, one request each (DELETE /api/jobs/:id); a refusal (a job still
 * running, already gone) is reported, not thrown.
 */
export function useDeleteJobs() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (ids: number[]): Promise<BulkOutcome> => {
      const out: BulkOutcome = { done: [], refused: [] };
      for (const id of ids) {
        try {
          await api.remove(id);
          out.done.push(id);
          qc.removeQueries({ queryKey: jobKey(id) });
          applyListMessageToCache(qc, { type: 'deleted', jobId: id });
        } catch (err) {
          out.refused.push({ id, why: (err as Error).message });
        }
      }
      return out;
    },
    onSettled: () => void qc.invalidateQueries({ queryKey: ['jobs', 'list'] }),
  });
}

/**
 * Re-run several jobs, one after the other: each is submitted again as it was submitted
 * (POST /api/jobs/:id/rerun — the server's stored YAML, secrets included, and launch overrides).
 * `done` holds the new jobs' ids; a job that cannot be re-run (deleted meanwhile) is refused.
 */
export function useRerunJobs() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (ids: number[]): Promise<BulkOutcome> => {
      const out: BulkOutcome = { done: [], refused: [] };
      for (const id of ids) {
        try {
          out.done.push((await api.rerun(id)).id);
        } catch (err) {
          out.refused.push({ id, why: (err as Error).message });
        }
      }
      return out;
    },
    onSettled: () => void qc.invalidateQueries({ queryKey: ['jobs', 'list'] }),
  });
}

/** Re-run one job (POST /api/jobs/:id/rerun); answers the new job. */
export function useRerunJob() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => api.rerun(id),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['jobs', 'list'] }),
  });
}

/** Submit a spec (YAML text). */
export function useSubmitJob() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (v: { yaml: string; name?: string }) => api.submit(v.yaml, v.name ? { name: v.name } : {}),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['jobs', 'list'] }),
  });
}

/** The current time (ms epoch), re-rendering every `everyMs` — for relative times and live durations. */
export function useNow(everyMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}
