/**
 * The OpenAPI 3.1 document of jobdeck's HTTP API (GET /api/openapi.json), GENERATED from the
 * zod schemas in lib/api/schemas.ts — the same objects the route handlers validate requests
 * with — by zod 4's `z.toJSONSchema` (JSON Schema draft 2020-12, OpenAPI 3.1's dialect).
 *
 * Only the paths (which route, which schema, which status) are written here, in one table.
 * The log routes (`/api/jobs/{id}/logs`, `…/logs/download`; `…/logs/all` takes none) take their query parameters from
 * the schemas lib/api/logs.ts exports. The login routes (`/api/auth/login|logout`,
 * lib/api/login.ts; `/api/auth/oidc/start|callback`, lib/api/oidc.ts) export no zod schema: they are
 * described by hand below (AUTH_PATHS). GET /api/monitor's state is described in words, its
 * `servers` by their schema (lib/api/monitor.ts).
 * WebSockets are not HTTP operations: their protocol is described as text (info.description and
 * the `/ws/…` entries, answered with 101 Switching Protocols).
 */
import { json, problem, queryParams, ref, type Json } from './openapi-json';
import { teamPaths } from './openapi-team';
import { ServerViewSchema } from './monitor';
import { flowPaths } from './openapi-flow';
import { InsightsQuerySchema } from './insights';
import { z } from 'zod';
import { LogDownloadQuerySchema, LogRangeQuerySchema } from './logs';
import { version } from './version';
import { MAX_DELIVERY_LIMIT } from './webhook-schemas';
import { QUEUE_NAME } from '../jobs/spec';
import {
  apiRegistry,
  CancelRequestSchema,
  DEFAULT_LIST_LIMIT,
  MAX_LIST_LIMIT,
  PatchJobSchema,
  SubmitJsonSchema,
  SubmitQuerySchema,
  ValidateJsonSchema,
  YAML_CONTENT_TYPES,
} from './schemas';
import { PutQueueSchema } from './queue-schemas';
import { CountsQuerySchema, ListQuerySchema } from './schemas-list';
import { GrepQuerySchema } from './grep';

/** The named component schemas, each converted once, cross-referenced by $ref. */
function components(): Record<string, Json> {
  const out = z.toJSONSchema(apiRegistry, { uri: (id) => `#/components/schemas/${id}`, unrepresentable: 'any' }) as { schemas: Record<string, Json> };
  for (const s of Object.values(out.schemas)) {
    delete s.$schema;
    delete s.$id;
  }
  return out.schemas;
}

/** The server view's component (lib/api/monitor.ts). */
const SERVER_VIEW = apiRegistry.get(ServerViewSchema)!.id!;

const jobIdParam: Json = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'Job id. Not a positive integer → 400.',
  schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
};

const queueNameParam: Json = {
  name: 'name',
  in: 'path',
  required: true,
  description: 'Queue name (a–z, 0–9, - and _; 1–63 characters). Another → 400.',
  schema: { type: 'string', pattern: QUEUE_NAME.source },
};


const ERRORS = {
  400: problem('Bad input: what and where (detail); a spec error lists every issue with file, line, column and key path (issues).'),
  401: problem('Missing, wrong, revoked or expired token (Authorization: Bearer …).'),
  404: problem('No such job: "job 123 not found".'),
  409: problem('Conflict with the job as it is (already terminal, not terminal yet, submissionId reused with another spec).'),
  413: problem("Body larger than the route's limit: 1 MiB, 16 KiB for the login, JOBDECK_UPLOAD_MAX_BYTES (default 100 MiB) for an upload (lib/api/body-limits.ts)."),
  415: problem('Content-Type not accepted here (the answer lists the accepted ones).'),
  429: problem("The caller's pending quota is reached: `pending` (its jobs PENDING now), `maxPendingJobs`, `quotaSource` (`user`: its own; `role`: its role's default)."),
  priorityCap: problem("A member asked for a priority above its cap (\"priority 1000 is above the member cap 600 (queue gpu): ask an admin for more\"): `field` \"priority\", `priority`, `maxPriority`, `capSource` (`role`: JOBDECK_QUOTA_MEMBER_MAX_PRIORITY; `queue`: the queue's memberMaxPriority, then `queue` names it). Admins are not capped."),
};

const yamlBody = (description: string): Json => Object.fromEntries(YAML_CONTENT_TYPES.map((t) => [t, { schema: { type: 'string', description } }]));

/**
 * The log routes of lib/logs (owned there): parameters generated from the query schemas it
 * exports (LogRangeQuerySchema, LogDownloadQuerySchema); statuses as its handlers answer them.
 */
function logPaths(): Record<string, Json> {
  return {
    '/api/logs/grep': {
      get: {
        operationId: 'grepLogs',
        summary: 'Search the logs of the jobs a filter selects; matches streamed as NDJSON',
        tags: ['jobs'],
        parameters: queryParams(GrepQuerySchema, { status: { style: 'form', explode: true }, metadata: { style: 'form', explode: true }, label: { style: 'form', explode: true } }),
        responses: {
          200: {
            description:
              'application/x-ndjson, one object per line as found: {type:"match", jobId, task, attempt, line (1-based), text (≤ 2000 characters), cut}; last {type:"end", matches, jobs, files, reason: done|limit|time, engine: rg|node, elapsedMs} (or {type:"error", message}). Disconnecting stops the search.',
            content: { 'application/x-ndjson': { schema: { type: 'string' } } },
          },
          400: { ...ERRORS[400], description: 'A bad parameter, a user named by `owner` that does not exist, or a regular expression (regex=1) the engine cannot compile — `pattern: not a regular expression the search can run: …`; before anything streams.' },
        },
      },
    },
    '/api/jobs/{id}/logs': {
      get: {
        operationId: 'readLogRange',
        summary: "A bounded byte range of one attempt's log (never the whole file in memory)",
        tags: ['logs'],
        parameters: [jobIdParam, ...queryParams(LogRangeQuerySchema)],
        responses: {
          200: json('LogRange', 'The bytes [offset, nextOffset) as UTF-8 text, never splitting a character.'),
          400: ERRORS[400],
          404: problem('No such job, task or attempt.'),
          416: problem('offset is past the end of the log.'),
        },
      },
    },
    '/api/jobs/{id}/logs/download': {
      get: {
        operationId: 'downloadLog',
        summary: "One attempt's whole log file, streamed",
        tags: ['logs'],
        parameters: [jobIdParam, ...queryParams(LogDownloadQuerySchema)],
        responses: {
          200: { description: "The log bytes as written. A finished log stored compressed is sent as it is, with `Content-Encoding: gzip`, to a client whose `Accept-Encoding` accepts gzip (one gzip member: any gzip decoder gets the whole log), and inflated on the way otherwise; `Vary: Accept-Encoding` either way.", content: { 'text/plain': { schema: { type: 'string' } } } },
          400: ERRORS[400],
          404: problem('No such job, task or attempt.'),
        },
      },
    },
    '/api/jobs/{id}/logs/all': {
      get: {
        operationId: 'downloadJobLogs',
        summary: "The whole job's logs as one file, streamed",
        description:
          'Every task and attempt in order (every rank of a multi-node attempt), each section under one header line `==> task 0 train · attempt 2 (exit 1) <==` holding the log bytes exactly. Named `job-<id>-<name>.log`.',
        tags: ['logs'],
        parameters: [jobIdParam],
        responses: {
          200: { description: 'The sections, each header line followed by its log bytes.', content: { 'text/plain': { schema: { type: 'string' } } } },
          400: ERRORS[400],
          404: problem('No such job.'),
        },
      },
    },
  };
}

/** The login exchange of lib/api/login.ts (owned there; described by hand here). */
const AUTH_PATHS: Record<string, Json> = {
  '/api/auth/login': {
    post: {
      operationId: 'login',
      summary: 'Exchange the admin token for a browser session cookie (no token needed)',
      tags: ['meta'],
      security: [],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { type: 'object', required: ['token'], properties: { token: { type: 'string' }, next: { type: 'string', description: 'Path to go to after login.' } } },
          },
          'application/x-www-form-urlencoded': { schema: { type: 'object', required: ['token'], properties: { token: { type: 'string' }, next: { type: 'string' } } } },
        },
      },
      responses: {
        200: { description: 'JSON `{ ok, next, expiresAt }` and a session cookie (HttpOnly, SameSite=Strict).' },
        303: { description: 'Form posts: redirect to `next` (or back to /login?error=invalid).' },
        400: ERRORS[400],
        401: ERRORS[401],
        403: problem('Cross-origin post refused.'),
        413: ERRORS[413],
        415: ERRORS[415],
      },
    },
  },
  '/api/auth/oidc/start': {
    get: {
      operationId: 'oidcStart',
      summary: 'Begin a single sign-on: redirect to the identity provider (no token needed)',
      tags: ['meta'],
      security: [],
      parameters: [{ name: 'next', in: 'query', required: false, schema: { type: 'string', maxLength: 2048 }, description: 'Path to go to after login.' }],
      responses: {
        302: { description: 'To the provider (authorization code + PKCE); a signed 10-minute flow cookie is set.' },
        400: ERRORS[400],
        404: problem('Single sign-on is not configured.'),
        502: problem('The provider\'s metadata could not be read.'),
      },
    },
  },
  '/api/auth/oidc/callback': {
    get: {
      operationId: 'oidcCallback',
      summary: 'Where the identity provider sends the browser back (no token needed)',
      tags: ['meta'],
      security: [],
      parameters: [
        { name: 'code', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'state', in: 'query', required: false, schema: { type: 'string' } },
      ],
      responses: {
        200: { description: 'Signed in: a session cookie (HttpOnly, SameSite=Strict) and a page moving on to `next`.' },
        400: problem('No login in progress (flow cookie missing, expired or altered).'),
        401: problem('The code, state, issuer, audience or nonce did not verify, or no role is mapped.'),
        404: problem('Single sign-on is not configured.'),
      },
    },
  },
  '/api/auth/logout': {
    post: {
      operationId: 'logout',
      summary: 'End the browser session (revoked server-side, cookie cleared)',
      tags: ['meta'],
      responses: { 200: { description: '`{ ok: true }`' }, 303: { description: 'Form posts: redirect to /login.' }, 401: ERRORS[401] },
    },
  },
};

const WS_TEXT = `## WebSockets

WebSockets are not OpenAPI operations; they are listed under \`/ws/…\` (answered with 101) and
described here. Types: lib/logs/protocol.ts.

- \`/ws/jobs/{id}?task=T&attempt=A&offset=O&follow=1\` — one job's live story. JSON text frames
  carry control messages (\`hello\` with the JobSummary, \`job\`, \`task\`, \`attempt\` start/end with
  exit code and "restart n of max", \`times\` with [end offset, unix ms] entries saying when each
  part of a log was written, \`end\`, \`error\` with where to resume; a client ignores types it
  does not know); log bytes travel as
  binary frames with a 16-byte header (version, kind, task u16, attempt u32, offset u64,
  big-endian). A client resumes after a drop from its last task/attempt/offset: nothing lost,
  nothing twice. \`follow=0\` sends what exists and \`end\`s at once.
- \`/ws/jobs\` — list-level changes for the dashboard: \`created\`, \`updated\` (a JobSummary),
  \`deleted\`.
`;

const WS_PATHS: Record<string, Json> = {
  '/ws/jobs/{id}': {
    get: {
      operationId: 'streamJob',
      summary: "WebSocket: one job's statuses, attempts and log bytes, live (see the description)",
      tags: ['websocket'],
      parameters: [
        jobIdParam,
        { name: 'task', in: 'query', required: false, schema: { type: 'integer', minimum: 0, default: 0 } },
        { name: 'attempt', in: 'query', required: false, schema: { type: 'integer', minimum: 1, default: 1 } },
        { name: 'offset', in: 'query', required: false, schema: { type: 'integer', minimum: 0, default: 0 } },
        { name: 'follow', in: 'query', required: false, schema: { type: 'string', enum: ['0', '1'], default: '1' } },
        { name: 'since', in: 'query', required: false, description: 'The eventId of the last status message received: those up to it are not sent again.', schema: { type: 'integer', minimum: 0 } },
        { name: 'rank', in: 'query', required: false, description: "Only this rank's log of multi-node attempts (offset is then rank K's).", schema: { type: 'integer', minimum: 0 } },
        { name: 'offsets', in: 'query', required: false, description: 'The start offset of each rank of the start attempt, comma-separated (instead of offset).', schema: { type: 'string', pattern: '^[0-9]{1,15}(,[0-9]{1,15}){0,1023}$' } },
      ],
      responses: { 101: { description: 'Switching Protocols: the job stream (lib/logs/protocol.ts).' } },
    },
  },
  '/ws/jobs': {
    get: { operationId: 'streamJobList', summary: 'WebSocket: job created / updated / deleted, for the job list', tags: ['websocket'], responses: { 101: { description: 'Switching Protocols: ListMessage frames (lib/logs/protocol.ts).' } } },
  },
};

/** The job routes (lib/api's own handlers): request and answer schemas from lib/api/schemas.ts. */
function jobPaths(): Record<string, Json> {
  return {
    '/api/jobs': {
      post: {
        operationId: 'submitJob',
        summary: 'Submit a job',
        description:
          'A YAML body (one document per task; overrides in the query) or a JSON body. A repeated submissionId with the same spec (after overrides) answers the existing job with 200; with a different spec, 409. Concurrent submits with one submissionId create one job.',
        tags: ['jobs'],
        parameters: queryParams(SubmitQuerySchema).map((p) => ({ ...p, description: `${(p.description as string) ?? ''} (YAML bodies only.)`.trim() })),
        requestBody: {
          required: true,
          content: { ...yamlBody('The job YAML.'), 'application/json': { schema: ref('SubmitRequest') } },
        },
        responses: {
          201: json('SubmitResult', 'Created (PENDING).'),
          200: json('SubmitResult', 'A repeated submissionId matched the same spec: the existing job.'),
          400: ERRORS[400], 403: ERRORS.priorityCap, 409: ERRORS[409], 413: ERRORS[413], 415: ERRORS[415], 429: ERRORS[429],
        },
      },
      get: {
        operationId: 'listJobs',
        summary: 'List jobs, newest first (keyset pages)',
        tags: ['jobs'],
        parameters: queryParams(ListQuerySchema, {
          status: { style: 'form', explode: true },
          metadata: { style: 'form', explode: true },
          label: { style: 'form', explode: true },
        }),
        responses: { 200: json('JobList', `A page (default ${DEFAULT_LIST_LIMIT}, at most ${MAX_LIST_LIMIT} jobs).`), 400: ERRORS[400] },
      },
    },
    '/api/jobs/counts': {
      get: {
        operationId: 'countJobs',
        summary: 'How many jobs are in each status (among those a search finds)',
        tags: ['jobs'],
        parameters: queryParams(CountsQuerySchema, { metadata: { style: 'form', explode: true }, label: { style: 'form', explode: true } }),
        responses: { 200: json('JobCounts', 'Jobs per status.'), 400: ERRORS[400] },
      },
    },
    '/api/jobs/{id}': {
      get: {
        operationId: 'getJob',
        summary: 'One job with tasks, attempts and events',
        tags: ['jobs'],
        parameters: [jobIdParam],
        responses: { 200: json('JobDetail', 'The job.'), 400: ERRORS[400], 404: ERRORS[404] },
      },
      patch: {
        operationId: 'patchJob',
        summary: "Change a PENDING job's priority (reorders admission at once)",
        tags: ['jobs'],
        parameters: [jobIdParam],
        requestBody: { required: true, content: { 'application/json': { schema: ref('PatchJobRequest') } } },
        responses: {
          200: json('JobSummary', 'The job with its new priority.'),
          400: ERRORS[400],
          403: ERRORS.priorityCap,
          404: ERRORS[404],
          409: problem('The job is not PENDING: "job 12 is RUNNING: only a PENDING job\'s priority can change".'),
          413: ERRORS[413],
          415: ERRORS[415],
        },
      },
      delete: {
        operationId: 'deleteJob',
        summary: 'Delete a terminal job (rows and logs)',
        tags: ['jobs'],
        parameters: [jobIdParam],
        responses: { 204: { description: 'Deleted.' }, 400: ERRORS[400], 404: ERRORS[404], 409: problem('The job is not terminal: cancel it first.') },
      },
    },
    '/api/jobs/{id}/cancel': {
      post: {
        operationId: 'cancelJob',
        summary: 'Cancel one job',
        tags: ['jobs'],
        parameters: [jobIdParam],
        responses: { 200: json('CancelResult', 'Cancelled, or asked to stop.'), 400: ERRORS[400], 404: ERRORS[404], 409: problem('The job already ended: "job 12 is already SUCCEEDED".') },
      },
    },
    '/api/jobs/{id}/rerun': {
      post: {
        operationId: 'rerunJob',
        summary: 'Re-run a job: submit again what it was submitted with',
        description: 'The stored YAML (secrets as submitted, not as masked), the launch overrides (name, envs, queue, priority) and the metadata, as a new job — with what the body changes: `name`, `envs` (merged over the launch\'s, each wins), `priority`. The body is optional.',
        tags: ['jobs'],
        parameters: [jobIdParam],
        requestBody: { required: false, content: { 'application/json': { schema: ref('RerunRequest') } } },
        responses: { 201: json('SubmitResult', 'The new job (PENDING).'), 400: ERRORS[400], 403: ERRORS.priorityCap, 404: ERRORS[404], 413: ERRORS[413], 415: ERRORS[415], 429: ERRORS[429] },
      },
    },
    '/api/jobs/cancel': {
      post: {
        operationId: 'cancelJobs',
        summary: 'Cancel jobs by ids or by a filter',
        description: 'A filter selects jobs not yet terminal. A body with no ids and no filter is refused (400).',
        tags: ['jobs'],
        requestBody: { required: true, content: { 'application/json': { schema: ref('CancelRequest') } } },
        responses: { 200: json('CancelResult', 'What happened to each job.'), 400: ERRORS[400], 413: ERRORS[413], 415: ERRORS[415] },
      },
    },
  };
}

/** The operator queues (lib/api/queues.ts): limits and what each holds. */
function queuePaths(): Record<string, Json> {
  return {
    '/api/queues': {
      get: {
        operationId: 'listQueues',
        summary: 'Every queue with its limits and what it holds now',
        tags: ['queues'],
        responses: { 200: json('QueueList', 'The queues, "default" first.') },
      },
    },
    '/api/queues/{name}': {
      get: {
        operationId: 'getQueue',
        summary: 'One queue',
        tags: ['queues'],
        parameters: [queueNameParam],
        responses: { 200: json('Queue', 'The queue.'), 400: ERRORS[400], 404: ERRORS[404] },
      },
      put: {
        operationId: 'putQueue',
        summary: 'Create or replace a queue (its new limits apply at once)',
        tags: ['queues'],
        parameters: [queueNameParam],
        requestBody: { required: true, content: { 'application/json': { schema: ref('PutQueueRequest') } } },
        responses: { 200: json('Queue', 'The queue.'), 400: problem('A bad field, or the "default" queue (it has no limits).'), 413: ERRORS[413], 415: ERRORS[415] },
      },
      delete: {
        operationId: 'deleteQueue',
        summary: 'Delete a queue',
        tags: ['queues'],
        parameters: [queueNameParam],
        responses: { 204: { description: 'Deleted.' }, 400: ERRORS[400], 404: ERRORS[404], 409: problem('Jobs that did not finish are in the queue.') },
      },
    },
  };
}

const webhookNameParam: Json = {
  name: 'name',
  in: 'path',
  required: true,
  description: 'Webhook name (a–z, 0–9, - and _; 1–63 characters). Another → 400.',
  schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,62}$' },
};
const limitParam: Json = { name: 'limit', in: 'query', required: false, description: `How many (1–${MAX_DELIVERY_LIMIT}, default 50).`, schema: { type: 'integer', minimum: 1, maximum: MAX_DELIVERY_LIMIT } };

/** Webhook subscriptions, their delivery log, and a job's notifications (lib/api/webhooks.ts). */
function webhookPaths(): Record<string, Json> {
  const op = (operationId: string, summary: string, rest: Json): Json => ({ operationId, summary, tags: ['webhooks'], ...rest });
  const byName = { parameters: [webhookNameParam] };
  return {
    '/api/webhooks': {
      get: op('listWebhooks', 'Every webhook subscription (no secrets)', { responses: { 200: json('WebhookList', 'The subscriptions, by name.') } }),
      post: op('createWebhook', 'Create a subscription; its signing secret is answered this once', {
        requestBody: { required: true, content: { 'application/json': { schema: ref('CreateWebhookRequest') } } },
        responses: { 201: json('WebhookWithSecret', 'The subscription and its secret.'), 400: problem('A bad field; a refused URL (not http(s), a private or loopback address); too many subscriptions.'), 409: problem('The name is taken.'), 413: ERRORS[413], 415: ERRORS[415] },
      }),
    },
    '/api/webhooks/{name}': {
      get: op('getWebhook', 'One subscription', { ...byName, responses: { 200: json('Webhook', 'The subscription.'), 400: ERRORS[400], 404: problem('No such webhook.') } }),
      patch: op('patchWebhook', 'Change a subscription (enable / disable, URL, events, filters, format)', {
        ...byName,
        requestBody: { required: true, content: { 'application/json': { schema: ref('PatchWebhookRequest') } } },
        responses: { 200: json('Webhook', 'The subscription.'), 400: ERRORS[400], 404: problem('No such webhook.'), 413: ERRORS[413], 415: ERRORS[415] },
      }),
      delete: op('deleteWebhook', 'Delete a subscription and its delivery log', { ...byName, responses: { 204: { description: 'Deleted.' }, 400: ERRORS[400], 404: problem('No such webhook.') } }),
    },
    '/api/webhooks/{name}/rotate': {
      post: op('rotateWebhookSecret', 'A new signing secret, answered this once', { ...byName, responses: { 200: json('WebhookWithSecret', 'The subscription and its new secret.'), 400: ERRORS[400], 404: problem('No such webhook.') } }),
    },
    '/api/webhooks/{name}/test': {
      post: op('testWebhook', 'Queue a signed test event', { ...byName, responses: { 202: json('WebhookDelivery', 'The queued delivery.'), 400: ERRORS[400], 404: problem('No such webhook.') } }),
    },
    '/api/webhooks/{name}/deliveries': {
      get: op('listWebhookDeliveries', 'The last deliveries: status code, latency, attempts, next retry, response head', {
        parameters: [webhookNameParam, limitParam],
        responses: { 200: json('WebhookDeliveryList', 'Newest first.'), 400: ERRORS[400], 404: problem('No such webhook.') },
      }),
    },
    '/api/webhooks/{name}/deliveries/{delivery}/redeliver': {
      post: op('redeliverWebhook', 'Send a delivery again under the same id', {
        parameters: [webhookNameParam, { name: 'delivery', in: 'path', required: true, description: 'Delivery id (msg_…).', schema: { type: 'string', pattern: '^msg_[0-9a-f]{32}$' } }],
        responses: { 202: json('WebhookDelivery', 'The delivery, pending again.'), 400: ERRORS[400], 404: problem('No such webhook or delivery.') },
      }),
    },
    '/api/jobs/{id}/notifications': {
      get: op('jobNotifications', "The notifications a job's events caused", {
        parameters: [jobIdParam, limitParam],
        responses: { 200: json('WebhookDeliveryList', 'Oldest first.'), 400: ERRORS[400] },
      }),
    },
  };
}

/** The charts page's aggregates (lib/api/insights.ts). */
function insightPaths(): Record<string, Json> {
  return {
    '/api/insights': {
      get: {
        operationId: 'insights',
        summary: 'Jobs started/ended per bucket, queue wait and run duration p50/p95, busiest job names',
        tags: ['meta'],
        parameters: queryParams(InsightsQuerySchema),
        responses: { 200: json('Insights', 'The aggregates of the range, one value per bucket.'), 400: ERRORS[400] },
      },
    },
  };
}

/** Validation, health, the monitor's state and this document. */
function metaPaths(): Record<string, Json> {
  return {
    '/api/validate': {
      post: {
        operationId: 'validateSpec',
        summary: 'Validate job YAML (saves nothing)',
        tags: ['meta'],
        parameters: [{ name: 'filename', in: 'query', required: false, description: 'File name shown in issues (YAML bodies).', schema: { type: 'string' } }],
        requestBody: { required: true, content: { ...yamlBody('The job YAML.'), 'application/json': { schema: ref('ValidateRequest') } } },
        responses: { 200: json('ValidateResult', 'ok, or every issue with line, column and key path.'), 413: ERRORS[413], 415: ERRORS[415] },
      },
    },
    '/api/uploads': {
      post: {
        operationId: 'uploadFolder',
        summary: "Upload a task's folder (a gzip'd tar) for a relative workdir or file_mounts",
        tags: ['jobs'],
        description:
          "Stored once per content hash (sha256 of the bytes) in the data folder, and recorded as sent by the caller: a submit of the same user names the answer's `hash` as `workdirUpload` (another user's upload answers 400 as an unknown one, and GET /api/jobs/{id} shows its hash only to who may re-run the job). Entries: files, folders and relative symbolic links that stay inside the folder, followed through every other link; nothing inside a link; no absolute or `..` paths, no hard links or devices. At most JOBDECK_UPLOAD_MAX_BYTES (default 100 MiB) compressed, 100,000 entries and JOBDECK_UPLOAD_MAX_UNPACKED_BYTES (default 1 GiB) unpacked; a refusal (400) names the entry or the limit.",
        requestBody: { required: true, content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } } },
        responses: { 201: json('UploadManifest', 'Stored (or already stored): the manifest.'), 400: problem('Not a gzip\'d tar, or an entry breaks a rule (the entry is named).'), 413: ERRORS[413], 415: ERRORS[415] },
      },
    },
    '/api/health': {
      get: {
        operationId: 'health',
        summary: 'Database check (no token needed)',
        tags: ['meta'],
        security: [],
        responses: { 200: { description: '{ ok, database, migrations, version, degraded?, limits?, isolation? } — degraded: what works only in part (a full data-folder disk); limits.local: how the local executor holds attempts to their resources: { cgroups: "v1" | "v2" | null, enforced: ["memory", "cpu", "pids", "devices"], notes: [what is not enforced, and why] }; isolation: as whom jobs run { mode: "on" (each as its user\'s OS account) | "single-user" (not root: only the first admin\'s jobs, as jobdeck\'s account) | "off" (everyone\'s as jobdeck\'s account), runAccount?, why? } (runAccount and why for a signed-in caller).' }, 503: { description: 'The database failed.' } },
      },
    },
    '/api/monitor': {
      get: {
        operationId: 'monitorState',
        summary: "The monitor's state (lib/monitor/state.ts MonitorState)",
        tags: ['meta'],
        responses: {
          200: {
            description:
              'running, startedAt, reconcileMs, lastReconcileAt, lastReconcileDurationMs, lagMs (ms), jobsWatched, jobsWaiting, attemptsWatched, restarts, recoveries, readopted, transientRetries, controllerFailures, capacity { check, used, total, byExecutor }, memory { rssBytes, heapUsedBytes, heapTotalBytes, externalBytes, arrayBuffersBytes } (bytes, the server process), submits { statements, jobs } (submit statements sent and the jobs they carried; jobs ÷ statements is the mean batch), retention { logsDays, logsBytesLimit, jobsDays, intervalMs (the policy; null: not set), passes, logsRemovedJobs, filesRemoved, bytesFreed, jobsDeleted, uploadsRemoved, uploadBytesFreed (stored uploads no job names; since start), logBytes (all logs on disk at the last pass), lastPassMs }, compression { afterMs (JOBDECK_COMPRESS_LOGS_AFTER; null: off), intervalMs, rounds, attempts (finished attempts whose logs were handled), files, bytesIn (log bytes), bytesOut (on disk), deferred, leftPlain, lastRoundMs } (the log compressor, since start).',
            content: { 'application/json': { schema: { type: 'object', properties: { servers: { type: 'array', items: ref(SERVER_VIEW), description: 'The live servers, by start time; absent on one server (no leases).' } } } } },
          },
          401: ERRORS[401],
        },
      },
    },
    '/api/openapi.json': {
      get: { operationId: 'openapi', summary: 'This document', tags: ['meta'], responses: { 200: { description: 'OpenAPI 3.1 (JSON).' } } },
    },
  };
}

const INFO_DESCRIPTION = `Submit, watch, cancel and delete managed jobs (one command or a YAML pipeline of tasks).

Every error is \`application/problem+json\` (RFC 9457): \`title\` says what kind, \`detail\` says what
and where. Times are ISO-8601 (UTC); durations ms; offsets and sizes bytes. Env values whose
names look secret are masked in every answer.

${WS_TEXT}`;

/**
 * Builds the OpenAPI 3.1 document (pure; cheap enough to build per request, cached anyway).
 * Paths keep one order: jobs, logs, login, meta, WebSockets.
 */
export function buildOpenApiDocument(): Json {
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: { title: 'jobdeck', version: version(), description: INFO_DESCRIPTION },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    tags: [
      { name: 'jobs', description: 'Submit, list, inspect, cancel, delete.' },
      { name: 'queues', description: 'Operator queues: limits on running jobs and CPUs, a default priority.' },
      { name: 'webhooks', description: 'Signed webhooks on job events (Standard Webhooks), their delivery log.' },
      { name: 'logs', description: "Attempt logs (bounded reads, download)." },
      { name: 'websocket', description: 'Live streams (see the description).' },
      { name: 'meta', description: 'Health, validation, this document.' },
      { name: 'users', description: 'Users, roles, personal tokens, the audit log (docs/design.md §15).' },
      { name: 'groups', description: 'Arrays and sweeps: jobs submitted as one group (docs/design.md §17).' },
      { name: 'schedules', description: 'Jobs submitted on a cron expression (docs/design.md §19).' },
    ],
    paths: { ...jobPaths(), ...queuePaths(), ...webhookPaths(), ...logPaths(), ...AUTH_PATHS, ...insightPaths(), ...metaPaths(), ...teamPaths(), ...flowPaths(), ...WS_PATHS },
    components: {
      schemas: components(),
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'JOBDECK_TOKEN (or a token made by the server).' } },
    },
  };
}

let cached: Json | undefined;

/** The document, built once per process. */
export function openApiDocument(): Json {
  return (cached ??= buildOpenApiDocument());
}

/** Schemas the document is generated from (for tests that check a request both ways). */
export const OPENAPI_REQUEST_SCHEMAS = { SubmitJsonSchema, CancelRequestSchema, ValidateJsonSchema, ListQuerySchema, PatchJobSchema, PutQueueSchema } as const;
