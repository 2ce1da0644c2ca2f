/**
 * The dashboard's REST client (same origin; the browser's session cookie authenticates).
 * Errors are the API's problem+json bodies turned into ApiRequestError with the server's detail.
 * Browser-safe.
 */
import type { CancelResult, CreatedTokenView, DeliveryView, GroupDetail, ScheduleView, InsightsView, JobCounts, JobDetail, JobList, JobSummary, LogRange, MonitorServers, QueueList, QueueView, SubmitResult, WebhookView, TokenView, AuditRow, UserMe, UserView } from '../api/types';
import type { UserBody } from './user-form';
import type { ListFilter } from './list-cache';

/** One problem a spec has, where it is (POST /api/validate and 400 answers of POST /api/jobs). */
export interface SpecIssue {
  file?: string | null;
  /** 1-based line, when known. */
  line?: number | null;
  /** 1-based column, when known. */
  column?: number | null;
  /** Key path in the spec (`run`, `job_recovery.max_restarts_on_errors`…). */
  path?: string | (string | number)[] | null;
  message: string;
}

/** POST /api/validate answer. */
export interface ValidateResult {
  ok: boolean;
  issues: SpecIssue[];
  /** Keys accepted and not acted on (absent from a server without warnings). */
  warnings?: SpecIssue[];
  /** Envs and secrets without a value: required at launch. */
  required?: SpecIssue[];
}

/** A failed API call: HTTP status plus the problem+json title/detail (and any extra members). */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(detail || title || `HTTP ${status}`);
    this.name = 'ApiRequestError';
  }

  /** Spec issues carried by a 400/422 answer, if any. */
  get issues(): SpecIssue[] {
    return Array.isArray(this.body.issues) ? (this.body.issues as SpecIssue[]) : [];
  }
}

/** Where the login page lives (the security engineer's route). */
export const LOGIN_PATH = '/login';

/** The page is on its way to the login page by itself (a logout): see leavingForLogin. */
let leaving = false;

/**
 * The page goes to the login page by itself from now on (the logout button): a request answered
 * 401 meanwhile — a poll or a stream's reconnect after the session was revoked — must not send it
 * to `/login?next=…` instead, racing the logout's own navigation.
 */
export function leavingForLogin(): void {
  leaving = true;
}

/** Sends the browser to the login page, coming back here afterwards (not when it is leaving for it already). */
export function redirectToLogin(): void {
  const loc = globalThis.location;
  if (!loc || leaving || loc.pathname === LOGIN_PATH) return;
  loc.assign(`${LOGIN_PATH}?next=${encodeURIComponent(loc.pathname + loc.search)}`);
}

/**
 * fetch() against the API; parses JSON answers. @throws ApiRequestError on a non-2xx answer
 * (a 401 also sends the browser to the login page), TypeError on a network failure.
 */
export async function apiFetch<T>(path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(path, { credentials: 'same-origin', ...init, headers: { accept: 'application/json', ...(init.headers ?? {}) } });
  const text = await res.text();
  let body: unknown = null;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = { detail: text.slice(0, 500) };
    }
  }
  if (!res.ok) {
    if (res.status === 401) redirectToLogin();
    const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    throw new ApiRequestError(res.status, String(b.title ?? res.statusText), String(b.detail ?? b.message ?? ''), b);
  }
  return body as T;
}

/** A queue's settings as PUT /api/queues/{name} takes them (null or absent: no limit, no default). */
export interface QueueSettingsInput {
  maxRunning?: number | null;
  maxCpus?: number | null;
  maxGpus?: number | null;
  /** ms; null: the server's start timeout. */
  startTimeoutMs?: number | null;
  defaultPriority?: number | null;
  /** Highest priority a member may give the queue's jobs; null: the role's cap only. */
  memberMaxPriority?: number | null;
}

const json = (method: string, data: unknown): RequestInit => ({ method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(data) });

/**
 * The parameters of a list's filter (status, search, queue, owner) as GET /api/jobs takes them —
 * and GET /api/logs/grep, so "Search logs" reads the jobs the list shows.
 */
export function listFilterParams(f: ListFilterFields): URLSearchParams {
  const p = new URLSearchParams();
  for (const s of f.status) p.append('status', s);
  if (f.q) p.set('q', f.q);
  if (f.queue) p.set('queue', f.queue);
  if (f.owner) p.set('owner', f.owner);
  return p;
}

/** The filter fields of a ListFilter (not its order or page). */
export type ListFilterFields = Pick<ListFilter, 'status' | 'q' | 'queue' | 'owner'>;

/** The query string of GET /api/jobs for a filter. */
export function listQuery(f: ListFilter): string {
  const p = listFilterParams(f);
  if (f.fold) p.set('fold', 'groups');
  if (f.sort !== 'newest') p.set('sort', f.sort);
  if (f.cursor) p.set('cursor', f.cursor);
  p.set('limit', String(f.limit));
  return p.toString();
}

export const api = {
  listJobs: (f: ListFilter, signal?: AbortSignal) => apiFetch<JobList>(`/api/jobs?${listQuery(f)}`, { signal }),
  counts: (q: string, queue: string, signal?: AbortSignal) => {
    const p = new URLSearchParams();
    if (q) p.set('q', q);
    if (queue) p.set('queue', queue);
    const s = p.toString();
    return apiFetch<JobCounts>(`/api/jobs/counts${s ? `?${s}` : ''}`, { signal });
  },
  /** Every operator queue with its limits and what it holds (GET /api/queues). */
  queues: (signal?: AbortSignal) => apiFetch<QueueList>('/api/queues', { signal }),
  /** One queue's settings and what it holds (GET /api/queues/{name}). */
  queue: (name: string, signal?: AbortSignal) => apiFetch<QueueView>(`/api/queues/${encodeURIComponent(name)}`, { signal }),
  /** Creates or replaces a queue (PUT /api/queues/{name}; a field left out is no limit). */
  putQueue: (name: string, settings: QueueSettingsInput) => apiFetch<QueueView>(`/api/queues/${encodeURIComponent(name)}`, json('PUT', settings)),
  /** Deletes a queue (409 while an unfinished job is in it). */
  deleteQueue: (name: string) => apiFetch<unknown>(`/api/queues/${encodeURIComponent(name)}`, { method: 'DELETE' }),
  getJob: (id: number, signal?: AbortSignal) => apiFetch<JobDetail>(`/api/jobs/${id}`, { signal }),
  /** One byte range of the current task's latest attempt's log (GET /api/jobs/{id}/logs): its `size` says how long the log is. */
  logRange: (id: number, limit: number, signal?: AbortSignal) => apiFetch<LogRange>(`/api/jobs/${id}/logs?limit=${limit}`, { signal }),
  submit: (yaml: string, extra: { name?: string; envs?: Record<string, string>; submissionId?: string } = {}) => apiFetch<SubmitResult>('/api/jobs', json('POST', { yaml, ...extra, origin: 'dashboard' })),
  /** Job `id` submitted again as it was submitted (lib/control/rerun.ts), as a new job. */
  rerun: (id: number) => apiFetch<SubmitResult>(`/api/jobs/${id}/rerun`, json('POST', { origin: 'dashboard' })),
  cancel: (id: number) => apiFetch<CancelResult>(`/api/jobs/${id}/cancel`, { method: 'POST' }),
  cancelMany: (ids: number[]) => apiFetch<CancelResult>('/api/jobs/cancel', json('POST', { ids })),
  remove: (id: number) => apiFetch<unknown>(`/api/jobs/${id}`, { method: 'DELETE' }),
  setPriority: (id: number, priority: number) => apiFetch<JobSummary>(`/api/jobs/${id}`, json('PATCH', { priority })),
  /** The live servers of the database (GET /api/monitor `servers`; absent on one server). */
  monitor: (signal?: AbortSignal) => apiFetch<MonitorServers>('/api/monitor', { signal }),
  /** The charts page's aggregates (GET /api/insights). */
  insights: (range: InsightsView['range'], signal?: AbortSignal) => apiFetch<InsightsView>(`/api/insights?range=${range}`, { signal }),
  validate: (yaml: string, signal?: AbortSignal) => apiFetch<ValidateResult>('/api/validate', { ...json('POST', { yaml }), signal }),
};

/** Groups (arrays, sweeps: /api/groups…) and schedules (/api/schedules…). */
export const flowApi = {
  group: (id: number, signal?: AbortSignal) => apiFetch<GroupDetail>(`/api/groups/${id}`, { signal }),
  cancelGroup: (id: number) => apiFetch<CancelResult>(`/api/groups/${id}/cancel`, { method: 'POST' }),
  rerunFailed: (id: number) => apiFetch<{ rerun: Array<{ index: number; from: number; jobId: number }> }>(`/api/groups/${id}/rerun-failed`, json('POST', { origin: 'dashboard' })),
  deleteGroup: (id: number) => apiFetch<{ deleted: number[] }>(`/api/groups/${id}`, { method: 'DELETE' }),
  schedules: (signal?: AbortSignal) => apiFetch<{ schedules: ScheduleView[] }>('/api/schedules', { signal }),
  schedule: (name: string, signal?: AbortSignal) => apiFetch<ScheduleView>(`/api/schedules/${encodeURIComponent(name)}`, { signal }),
  createSchedule: (body: { name: string; cron: string; timezone?: string; yaml: string; overlap: string; catchUp: string }) => apiFetch<ScheduleView>('/api/schedules', json('POST', body)),
  scheduleAction: (name: string, action: 'pause' | 'resume' | 'run') => apiFetch<unknown>(`/api/schedules/${encodeURIComponent(name)}/${action}`, json('POST', {})),
  deleteSchedule: (name: string) => apiFetch<unknown>(`/api/schedules/${encodeURIComponent(name)}`, { method: 'DELETE' }),
};

/** The webhook API (/api/webhooks…; the secret comes only in the create and rotate answers). */
export const webhookApi = {
  list: (signal?: AbortSignal) => apiFetch<{ webhooks: WebhookView[] }>('/api/webhooks', { signal }),
  create: (body: { name: string; url: string; events: string[]; format: string; jobNameGlob?: string }) => apiFetch<{ webhook: WebhookView; secret: string }>('/api/webhooks', json('POST', body)),
  setEnabled: (name: string, enabled: boolean) => apiFetch<WebhookView>(`/api/webhooks/${encodeURIComponent(name)}`, json('PATCH', { enabled })),
  rotate: (name: string) => apiFetch<{ webhook: WebhookView; secret: string }>(`/api/webhooks/${encodeURIComponent(name)}/rotate`, { method: 'POST' }),
  remove: (name: string) => apiFetch<unknown>(`/api/webhooks/${encodeURIComponent(name)}`, { method: 'DELETE' }),
  test: (name: string) => apiFetch<DeliveryView>(`/api/webhooks/${encodeURIComponent(name)}/test`, { method: 'POST' }),
  deliveries: (name: string, signal?: AbortSignal) => apiFetch<{ deliveries: DeliveryView[] }>(`/api/webhooks/${encodeURIComponent(name)}/deliveries?limit=50`, { signal }),
  redeliver: (name: string, id: string) => apiFetch<DeliveryView>(`/api/webhooks/${encodeURIComponent(name)}/deliveries/${id}/redeliver`, { method: 'POST' }),
  jobNotifications: (jobId: number, signal?: AbortSignal) => apiFetch<{ deliveries: DeliveryView[] }>(`/api/jobs/${jobId}/notifications?limit=50`, { signal }),
};

/** URL of an attempt's whole raw log file. */
export function downloadUrl(jobId: number, task: number, attempt: number, rank = 0): string {
  return `/api/jobs/${jobId}/logs/download?task=${task}&attempt=${attempt}${rank > 0 ? `&rank=${rank}` : ''}`;
}

/** The whole job's logs as one file (every task and attempt, each under a header line). */
export function jobLogUrl(jobId: number): string {
  return `/api/jobs/${jobId}/logs/all`;
}

/** Personal tokens, users and the audit log (/api/tokens, /api/users, /api/audit). */
export const teamApi = {
  me: (signal?: AbortSignal) => apiFetch<UserMe>('/api/users/me', { signal }),
  tokens: (all: boolean, signal?: AbortSignal) => apiFetch<{ tokens: TokenView[] }>(`/api/tokens${all ? '?all=1' : ''}`, { signal }),
  createToken: (body: { name: string; expiresInDays?: number }) => apiFetch<CreatedTokenView>('/api/tokens', json('POST', body)),
  revokeToken: (id: number) => apiFetch<unknown>(`/api/tokens/${id}`, { method: 'DELETE' }),
  /** Every user (GET /api/users; admins — 403 for others). */
  users: (signal?: AbortSignal) => apiFetch<{ users: UserView[] }>('/api/users', { signal }),
  /** Creates a user (POST /api/users; 400 names the field, 409 a taken name). */
  createUser: (body: UserBody) => apiFetch<UserView>('/api/users', json('POST', body)),
  /** Changes a user (PATCH /api/users/{id}): role, password, quotas, `disabled`. */
  patchUser: (id: number, body: UserBody) => apiFetch<UserView>(`/api/users/${id}`, json('PATCH', body)),
  audit: (q: string, signal?: AbortSignal) => apiFetch<{ events: AuditRow[]; next: number | null }>(`/api/audit${q ? `?${q}` : ''}`, { signal }),
};
