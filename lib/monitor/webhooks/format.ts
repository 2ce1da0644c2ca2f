/**
 * A delivery's body in its subscription's format (docs/design.md §10 "Webhooks"): `json` sends
 * the outbox payload as it is (`{type, timestamp, data}`); `slack` a Slack incoming-webhook
 * message (`text` plus Block Kit `blocks`) a person can read — the job's name and id, its status
 * with an emoji, which task, the exit code, the restarts used, the duration, and a link to the
 * job page when `JOBDECK_PUBLIC_URL` is set. Headers: the Standard Webhooks signature
 * (`standardwebhooks`: `webhook-id`, `webhook-timestamp`, `webhook-signature`).
 */
import { Webhook } from 'standardwebhooks';

/** The outbox payload (lib/store/outbox.ts) as far as the formats read it. */
export interface WebhookPayload {
  type: string;
  timestamp: string;
  data: {
    job?: { id?: number; name?: string; status?: string; statusReason?: string | null; restartCount?: number; startedAt?: string | null; endedAt?: string | null; [k: string]: unknown };
    task?: { index?: number; name?: string | null; [k: string]: unknown } | null;
    attempt?: { number?: unknown; [k: string]: unknown } | null;
    exitCode?: number | null;
    restartCount?: number;
    reason?: string | null;
    message?: string;
    [k: string]: unknown;
  };
}

const HEADLINE: Readonly<Record<string, { emoji: string; says: string }>> = {
  'job.succeeded': { emoji: ':white_check_mark:', says: 'succeeded' },
  'job.failed': { emoji: ':x:', says: 'failed' },
  'job.cancelled': { emoji: ':no_entry_sign:', says: 'was cancelled' },
  'job.started': { emoji: ':arrow_forward:', says: 'started' },
  'task.restarted': { emoji: ':repeat:', says: 'restarted a task' },
  'task.recovered': { emoji: ':adhesive_bandage:', says: 'is recovering a task' },
  test: { emoji: ':bell:', says: 'test event' },
};

/** A row as the outbox snapshot holds it (to_jsonb: timestamps as UTC without a zone). */
type JsonRow = Record<string, unknown>;

/** What lib/store/outbox.ts stores in a delivery's `payload`: the event, the job row before the statement, the rows it wrote. */
export interface OutboxSnapshot {
  type: string;
  event: { id: number; jobId: number; at: string; entity: string; taskIndex: number | null; attemptNumber: number | null; from: string | null; to: string; reason: string | null };
  job: JsonRow;
  rows: Array<{ ent: string; row: JsonRow }> | null;
}

const iso = (v: unknown): string | null => (typeof v === 'string' ? (/Z$|[+-]\d\d:\d\d$/.test(v) ? v : `${v}Z`) : null);

/**
 * The `json` body of a delivery, `{type, timestamp, data: {eventId, from, to, reason, job, task,
 * attempt, previousAttempt, exitCode, restartCount, recoveryCount}}`, from its outbox snapshot:
 * each row as the statement wrote it, else as it was before. For a restart or a recovery,
 * `exitCode` is the ended attempt's. A payload that is already a body (a test event) is answered
 * as it is. Pure: every try of a delivery sends the same body.
 */
export function webhookPayload(stored: unknown): WebhookPayload {
  const p = stored as Partial<OutboxSnapshot> & Partial<WebhookPayload>;
  if (!p.event) return p as WebhookPayload;
  const ev = p.event;
  const rows = p.rows ?? [];
  const of = (ent: string, ok: (r: JsonRow) => boolean) => rows.find((r) => r.ent === ent && ok(r.row))?.row ?? null;
  const job = of('job', (r) => r.id === ev.jobId) ?? p.job ?? {};
  const index = ev.taskIndex ?? (job.currentTask as number | undefined) ?? 0;
  const task = of('task', (r) => r.jobId === ev.jobId && r.index === index);
  const attempts = rows.filter((r) => r.ent === 'attempt' && task && r.row.taskId === task.id).map((r) => r.row);
  const number = ev.attemptNumber ?? (attempts.length ? Math.max(...attempts.map((a) => a.number as number)) : null);
  const attempt = attempts.find((a) => a.number === number) ?? null;
  const isNew = p.type === 'task.restarted' || p.type === 'task.recovered';
  const previous = isNew && number !== null ? (attempts.find((a) => a.number === number - 1) ?? null) : null;
  const attemptView = (a: JsonRow | null) => (a ? { number: a.number, cause: a.cause, status: a.status, exitCode: a.exitCode ?? null } : null);
  const exitCode = isNew ? (previous?.exitCode ?? null) : (attempt?.exitCode ?? task?.exitCode ?? null);
  return {
    type: p.type!,
    timestamp: iso(ev.at) ?? new Date().toISOString(),
    data: {
      eventId: ev.id,
      from: ev.from,
      to: ev.to,
      reason: ev.reason,
      job: {
        id: job.id as number,
        name: job.name as string,
        status: job.status as string,
        statusReason: (job.statusReason as string | null) ?? null,
        queue: job.queue,
        executor: job.executor,
        metadata: job.metadata ?? null,
        taskCount: job.taskCount,
        restartCount: job.restartCount as number,
        recoveryCount: job.recoveryCount,
        submittedAt: iso(job.submittedAt),
        startedAt: iso(job.startedAt),
        endedAt: iso(job.endedAt),
        // Its group (an array) and its schedule, when it has one (docs/design.md §17, §19).
        groupId: (job.groupId as number | null | undefined) ?? null,
        scheduleId: (job.scheduleId as number | null | undefined) ?? null,
      },
      task: task ? { index: task.index as number, name: (task.name as string | null) ?? null, status: task.status, exitCode: task.exitCode ?? null, restarts: task.restarts, recoveries: task.recoveries } : null,
      attempt: attemptView(attempt),
      previousAttempt: attemptView(previous),
      exitCode: exitCode as number | null,
      restartCount: job.restartCount as number,
      recoveryCount: job.recoveryCount,
    },
  };
}

/** A duration in ms as `1 h 2 min`, `3 min 4 s`, `5 s`. */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** Slack's mrkdwn escapes (`&`, `<`, `>`): a job name cannot inject a link or a mention. */
function esc(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** The Slack incoming-webhook message of a payload (see the module comment). */
export function slackMessage(p: WebhookPayload, publicUrl: string | null): { text: string; blocks: unknown[] } {
  const h = HEADLINE[p.type] ?? { emoji: ':bell:', says: p.type };
  const job = p.data.job ?? {};
  const name = esc(job.name ?? 'jobdeck');
  const id = job.id !== undefined ? ` #${job.id}` : '';
  const link = publicUrl && job.id !== undefined ? `${publicUrl}/jobs/${job.id}` : null;
  const title = link ? `<${link}|${name}${id}>` : `*${name}${id}*`;
  const facts: string[] = [];
  if (job.status) facts.push(`*Status:* ${job.status}`);
  const task = p.data.task;
  if (task && task.index !== undefined) facts.push(`*Task:* ${task.index}${task.name ? ` (${esc(task.name)})` : ''}${p.data.attempt?.number ? `, attempt ${String(p.data.attempt.number)}` : ''}`);
  if (p.data.exitCode !== undefined && p.data.exitCode !== null) facts.push(`*Exit code:* ${p.data.exitCode}`);
  if (p.data.restartCount !== undefined) facts.push(`*Restarts used:* ${p.data.restartCount}`);
  if (job.startedAt) facts.push(`*Duration:* ${humanDuration((job.endedAt ? Date.parse(job.endedAt) : Date.parse(p.timestamp)) - Date.parse(job.startedAt))}`);
  const why = p.data.message ?? job.statusReason ?? p.data.reason ?? null;
  const text = `${h.emoji} ${name}${id} ${h.says}${why ? `: ${esc(why)}` : ''}`;
  const blocks: unknown[] = [{ type: 'section', text: { type: 'mrkdwn', text: `${h.emoji} ${title} ${h.says}${why ? `\n${esc(why)}` : ''}` } }];
  if (facts.length) blocks.push({ type: 'section', fields: facts.map((f) => ({ type: 'mrkdwn', text: f })) });
  if (link) blocks.push({ type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open job' }, url: link }] });
  return { text, blocks };
}

/** The body sent for a stored payload (an outbox snapshot, or a test event's body) in `format`. */
export function webhookBody(stored: unknown, format: string, publicUrl: string | null): string {
  const payload = webhookPayload(stored);
  return JSON.stringify(format === 'slack' ? slackMessage(payload, publicUrl) : payload);
}

/** The Standard Webhooks headers of one try (`at`: its time; the id is the delivery's, the same on every try). */
export function signatureHeaders(secret: string, id: string, at: Date, body: string): Record<string, string> {
  const signature = new Webhook(secret).sign(id, at, body);
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
}
