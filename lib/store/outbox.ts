/**
 * The webhook outbox's INSERT (docs/design.md §10 "Webhooks"): one SQL fragment that turns the
 * JobEvents a statement writes into WebhookDelivery rows for every enabled subscription that
 * wants them: its event types, and its filters (name glob, metadata) — or the job's spec names it
 * (`notify: [name]`), which is the only way to reach a `namedOnly` subscription. It is part of
 * the statement (or transaction) that writes the JobEvents — the guarded write's batch statement
 * (transition.ts) and the batch cancel (cancel.ts) — so a notification exists exactly when its
 * change committed.
 *
 * Cost: which writes are notifications is decided in JavaScript, from the write itself
 * (webhookEventOf); a statement without one carries no outbox at all, nor does any while no
 * enabled subscription exists (anySubscription(), the store's copy of that fact, at most 1 s old:
 * a subscription made on another server hears the changes committed from then on). A statement
 * with one joins the subscriptions and stores a snapshot — the event, the job row, the rows the
 * statement wrote — from which webhookPayload() (lib/monitor/webhooks/format.ts) builds the body
 * when it is sent: the statement stays small to plan.
 */

import { JOB_FAILED } from '../jobs/status';

/** The event types a subscription may ask for (`*`: all of them). */
export const WEBHOOK_EVENTS = ['job.succeeded', 'job.failed', 'job.cancelled', 'job.started', 'task.restarted', 'task.recovered'] as const;

/** One of WEBHOOK_EVENTS. */
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/**
 * The notification a JobEvent is, or null. A restart and a recovery are the new attempt's event
 * (from nothing to STARTING, reason = its cause, as startAttempt records it); `job.failed` is any
 * failure of the job (JOB_FAILED); `job.started` its move out of PENDING into STARTING or RUNNING.
 */
export function webhookEventOf(e: { entity: string; from: string | null; to: string; reason?: string | null }): WebhookEvent | null {
  if (e.entity === 'job') {
    if (e.to === 'SUCCEEDED') return 'job.succeeded';
    if ((JOB_FAILED as ReadonlySet<string>).has(e.to)) return 'job.failed';
    if (e.to === 'CANCELLED') return 'job.cancelled';
    if (e.from === 'PENDING' && (e.to === 'STARTING' || e.to === 'RUNNING')) return 'job.started';
    return null;
  }
  if (e.entity === 'attempt' && e.from === null && e.to === 'STARTING') {
    if (e.reason === 'restart') return 'task.restarted';
    if (e.reason === 'recovery') return 'task.recovered';
  }
  return null;
}

/** A subscription's name glob (`*`, `?`) as a LIKE pattern (`%`, `_` and `\` escaped). */
const GLOB_LIKE = `replace(replace(replace(replace(replace(s."jobNameGlob", '\\', '\\\\'), '%', '\\%'), '_', '\\_'), '*', '%'), '?', '_')`;

/**
 * The INSERT of the deliveries for the JobEvents of `events` (a CTE or a parenthesised query with
 * JobEvent's columns and `t`, the event type; rows with `t` NULL are no notification). `rows`
 * names a CTE `(ent text, row jsonb)` of the rows the same statement wrote (null: there is none;
 * the job's tasks are then read from the table), `at` the statement's time as SQL. The payload
 * column holds the snapshot `{event, job, rows}` (webhookPayload() reads it).
 */
export function outboxInsert(events: string, rows: string | null, at: string): string {
  const written = rows
    ? `(SELECT jsonb_agg(jsonb_build_object('ent', r.ent, 'row', r."row")) FROM ${rows} r)`
    : `(SELECT jsonb_agg(jsonb_build_object('ent', 'task', 'row', to_jsonb(y.*))) FROM "Task" y WHERE y."jobId" = m."jobId")`;
  const match =
    `SELECT ev.*, s."id" AS sid, to_jsonb(j.*) AS job FROM ${events} ev` +
    ` JOIN "WebhookSubscription" s ON s."enabled" AND (ev.t = ANY (s."events") OR '*' = ANY (s."events")) AND (s."jobId" IS NULL OR s."jobId" = ev."jobId")` +
    ` JOIN "Job" j ON j."id" = ev."jobId" AND ((NOT s."namedOnly" AND (s."jobNameGlob" IS NULL OR j."name" LIKE ${GLOB_LIKE}) AND (s."metadataFilter" IS NULL OR j."metadata" @> s."metadataFilter"))` +
    ` OR COALESCE(j."spec"->'notify' ? s."name", false))` +
    ` WHERE ev.t IS NOT NULL OFFSET 0`;
  const event = `jsonb_build_object('id', m."id", 'jobId', m."jobId", 'at', m."at", 'entity', m."entity", 'taskIndex', m."taskIndex", 'attemptNumber', m."attemptNumber", 'from', m."from", 'to', m."to", 'reason', m."reason")`;
  return (
    `INSERT INTO "WebhookDelivery" ("id", "subscriptionId", "jobEventId", "jobId", "eventType", "payload", "status", "attempts", "retryFrom", "nextAttemptAt", "createdAt")` +
    ` SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), m.sid, m."id", m."jobId", m.t, jsonb_build_object('type', m.t, 'event', ${event}, 'job', m.job, 'rows', ${written}), 'pending', 0, ${at}, ${at}, ${at}` +
    ` FROM (${match}) m ORDER BY m."id", m.sid RETURNING "id"`
  );
}
