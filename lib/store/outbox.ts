/**
 * The webhook outbox's INSERT (docs/design.md §10 "Webhooks"): one SQL fragment that turns the
 * JobEvents a statement writes into WebhookDelivery rows for every enabled subscription that
 * wants them: its event types, and its filters (name glob, metadata) — or the job's spec names it
 * (`notify: [name]`), which is the only way to reach a `namedOnly` subscription. It is part of the statement (or transaction) that writes the JobEvents — the
 * guarded write's batch statement (transition.ts) and the batch cancel (cancel.ts) — so a
 * notification exists exactly when its change committed. With no subscription the join finds
 * nothing and the payload is never built (the match runs behind an `OFFSET 0` fence).
 */

/** The event types a subscription may ask for (`*`: all of them). */
export const WEBHOOK_EVENTS = ['job.succeeded', 'job.failed', 'job.cancelled', 'job.started', 'task.restarted', 'task.recovered'] as const;

/** One of WEBHOOK_EVENTS. */
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/**
 * The event type of a JobEvent `ev`, as SQL (NULL: no notification). A restart and a recovery
 * are the new attempt's event (from NULL, reason = its cause, as startAttempt records it);
 * `job.failed` is any FAILED_* status of the job; `job.started` its first move out of PENDING
 * into STARTING or RUNNING.
 */
const EVENT_TYPE = `CASE
  WHEN ev."entity" = 'job' AND ev."to" = 'SUCCEEDED' THEN 'job.succeeded'
  WHEN ev."entity" = 'job' AND ev."to" LIKE 'FAILED%' THEN 'job.failed'
  WHEN ev."entity" = 'job' AND ev."to" = 'CANCELLED' THEN 'job.cancelled'
  WHEN ev."entity" = 'job' AND ev."from" = 'PENDING' AND ev."to" IN ('STARTING', 'RUNNING') THEN 'job.started'
  WHEN ev."entity" = 'attempt' AND ev."from" IS NULL AND ev."reason" = 'restart' THEN 'task.restarted'
  WHEN ev."entity" = 'attempt' AND ev."from" IS NULL AND ev."reason" = 'recovery' THEN 'task.recovered'
END`;

/** A subscription's name glob (`*`, `?`) as a LIKE pattern (`%`, `_` and `\` escaped). */
const GLOB_LIKE = `replace(replace(replace(replace(replace(s."jobNameGlob", '\\', '\\\\'), '%', '\\%'), '_', '\\_'), '*', '%'), '?', '_')`;

/**
 * A row as jsonb: the one this statement wrote (from `rows`, a CTE of `(ent, row)`), else the
 * table's (the statement's snapshot: before its own writes).
 */
function rowOf(rows: string | null, ent: 'job' | 'task' | 'attempt', table: string, match: (col: (name: string) => string) => string): string {
  const fromTable = `(SELECT to_jsonb(x.*) FROM "${table}" x WHERE ${match((c) => `x."${c}"`)} LIMIT 1)`;
  if (!rows) return fromTable;
  return `COALESCE((SELECT r."row" FROM ${rows} r WHERE r.ent = '${ent}' AND ${match((c) => `(r."row"->>'${c}')::int`)} LIMIT 1), ${fromTable})`;
}

/** A timestamp's text (to_jsonb of TIMESTAMP(3): UTC without a zone) as ISO 8601 with `Z` (jsonb; null stays null). */
function iso(text: string): string {
  return `to_jsonb((${text}) || 'Z')`;
}

/**
 * The INSERT of the deliveries for the JobEvents of `events` (a CTE or a parenthesised query
 * with JobEvent's columns). `rows` names a CTE `(ent text, row jsonb)` of the rows the same
 * statement wrote (null: there is none, the table is read), `at` the statement's time as SQL.
 * The payload is the `json` format's body: `{type, timestamp, data: {eventId, from, to, reason,
 * job, task, attempt, exitCode, restartCount, recoveryCount}}` — for a restart or a recovery,
 * `exitCode` is the previous attempt's (the one that ended).
 */
export function outboxInsert(events: string, rows: string | null, at: string): string {
  const job = rowOf(rows, 'job', 'Job', (c) => `${c('id')} = m."jobId"`);
  const task = rowOf(rows, 'task', 'Task', (c) => `${c('jobId')} = m."jobId" AND ${c('index')} = COALESCE(m."taskIndex", (a.jr->>'currentTask')::int)`);
  const taskId = `(b.tr->>'id')::int`;
  const written = rows ? ` UNION ALL SELECT (r."row"->>'number')::int FROM ${rows} r WHERE r.ent = 'attempt' AND (r."row"->>'taskId')::int = ${taskId}` : '';
  const number = `COALESCE(m."attemptNumber", (SELECT max(z.n) FROM (SELECT y."number" AS n FROM "Attempt" y WHERE y."taskId" = ${taskId}${written}) z))`;
  const attempt = rowOf(rows, 'attempt', 'Attempt', (c) => `${c('taskId')} = ${taskId} AND ${c('number')} = c.n`);
  const previous = rowOf(rows, 'attempt', 'Attempt', (c) => `${c('taskId')} = ${taskId} AND ${c('number')} = c.n - 1`);
  const jobView = `jsonb_build_object('id', a.jr->'id', 'name', a.jr->'name', 'status', a.jr->'status', 'statusReason', a.jr->'statusReason', 'queue', a.jr->'queue', 'executor', a.jr->'executor', 'metadata', a.jr->'metadata', 'taskCount', a.jr->'taskCount', 'restartCount', a.jr->'restartCount', 'recoveryCount', a.jr->'recoveryCount', 'submittedAt', ${iso(`a.jr->>'submittedAt'`)}, 'startedAt', ${iso(`a.jr->>'startedAt'`)}, 'endedAt', ${iso(`a.jr->>'endedAt'`)})`;
  const taskView = `CASE WHEN b.tr IS NULL THEN NULL ELSE jsonb_build_object('index', b.tr->'index', 'name', b.tr->'name', 'status', b.tr->'status', 'exitCode', b.tr->'exitCode', 'restarts', b.tr->'restarts', 'recoveries', b.tr->'recoveries') END`;
  const attemptView = (v: string) => `CASE WHEN ${v} IS NULL THEN NULL ELSE jsonb_build_object('number', ${v}->'number', 'cause', ${v}->'cause', 'status', ${v}->'status', 'exitCode', ${v}->'exitCode') END`;
  const isNew = `m.t IN ('task.restarted', 'task.recovered')`;
  const exitCode = `CASE WHEN ${isNew} THEN d.pr->'exitCode' ELSE COALESCE(NULLIF(d.ar->'exitCode', 'null'::jsonb), b.tr->'exitCode') END`;
  const data =
    `jsonb_build_object('eventId', m."id", 'from', m."from", 'to', m."to", 'reason', m."reason", 'job', ${jobView}, 'task', ${taskView},` +
    ` 'attempt', ${attemptView('d.ar')}, 'previousAttempt', CASE WHEN ${isNew} THEN ${attemptView('d.pr')} ELSE NULL END,` +
    ` 'exitCode', ${exitCode}, 'restartCount', a.jr->'restartCount', 'recoveryCount', a.jr->'recoveryCount')`;
  const payload = `jsonb_build_object('type', m.t, 'timestamp', ${iso(`to_jsonb(m."at") #>> '{}'`)}, 'data', ${data})`;
  const match =
    `SELECT ev.*, s."id" AS sid FROM (SELECT x.*, ${EVENT_TYPE.replaceAll('ev.', 'x.')} AS t FROM ${events} x) ev` +
    ` JOIN "WebhookSubscription" s ON s."enabled" AND (ev.t = ANY (s."events") OR '*' = ANY (s."events")) AND (s."jobId" IS NULL OR s."jobId" = ev."jobId")` +
    ` JOIN "Job" j ON j."id" = ev."jobId" AND ((NOT s."namedOnly" AND (s."jobNameGlob" IS NULL OR j."name" LIKE ${GLOB_LIKE}) AND (s."metadataFilter" IS NULL OR j."metadata" @> s."metadataFilter"))` +
    ` OR COALESCE(j."spec"->'notify' ? s."name", false))` +
    ` WHERE ev.t IS NOT NULL OFFSET 0`;
  return (
    `INSERT INTO "WebhookDelivery" ("id", "subscriptionId", "jobEventId", "jobId", "eventType", "payload", "status", "attempts", "retryFrom", "nextAttemptAt", "createdAt")` +
    ` SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), m.sid, m."id", m."jobId", m.t, ${payload}, 'pending', 0, ${at}, ${at}, ${at}` +
    ` FROM (${match}) m` +
    ` CROSS JOIN LATERAL (SELECT ${job} AS jr) a` +
    ` CROSS JOIN LATERAL (SELECT ${task} AS tr) b` +
    ` CROSS JOIN LATERAL (SELECT ${number} AS n) c` +
    ` CROSS JOIN LATERAL (SELECT ${attempt} AS ar, CASE WHEN ${isNew} THEN ${previous} ELSE NULL END AS pr) d` +
    ` ORDER BY m."id", m.sid RETURNING "id"`
  );
}
