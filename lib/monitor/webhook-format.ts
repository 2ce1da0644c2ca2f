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
    job?: { id?: number; name?: string; status?: string; statusReason?: string | null; restartCount?: number; startedAt?: string | null; endedAt?: string | null };
    task?: { index?: number; name?: string | null } | null;
    attempt?: { number?: number } | null;
    exitCode?: number | null;
    restartCount?: number;
    reason?: string | null;
    message?: string;
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
  if (task && task.index !== undefined) facts.push(`*Task:* ${task.index}${task.name ? ` (${esc(task.name)})` : ''}${p.data.attempt?.number ? `, attempt ${p.data.attempt.number}` : ''}`);
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

/** The body sent for a payload in `format`. */
export function webhookBody(payload: WebhookPayload, format: string, publicUrl: string | null): string {
  return JSON.stringify(format === 'slack' ? slackMessage(payload, publicUrl) : payload);
}

/** The Standard Webhooks headers of one try (`at`: its time; the id is the delivery's, the same on every try). */
export function signatureHeaders(secret: string, id: string, at: Date, body: string): Record<string, string> {
  const signature = new Webhook(secret).sign(id, at, body);
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
}
