/**
 * The zod schemas of the operator queues' requests (PUT /api/queues/{name}; docs/design.md §6
 * "Queues"), registered as OpenAPI components like lib/api/schemas.ts — kept apart so that file
 * stays readable in one sitting.
 */
import { z } from 'zod';
import { DEFAULT_QUEUE, PRIORITY, QUEUE_NAME, QUEUE_NAME_EXPECTED } from '../jobs/spec';
import { named, PrioritySchema } from './schemas';

/** Path parameter `name` of /api/queues/{name}. */
export const QueueNameSchema = z
  .string()
  .regex(QUEUE_NAME, { error: (iss) => `queue name ${JSON.stringify(String(iss.input).slice(0, 80))}: ${QUEUE_NAME_EXPECTED}` })
  .meta({ description: 'Queue name (a–z, 0–9, - and _; 1–63 characters).' });

/** Largest maxRunning of a queue. */
export const MAX_QUEUE_RUNNING = 100_000;
/** Largest maxCpus of a queue. */
export const MAX_QUEUE_CPUS = 1_000_000;
/** Largest maxGpus of a queue. */
export const MAX_QUEUE_GPUS = 100_000;
/** Longest start timeout of a queue (ms): a year. */
export const MAX_START_TIMEOUT_MS = 366 * 24 * 3600 * 1000;
const GPUS_EXPECTED = `expected a GPU count above 0 and at most ${MAX_QUEUE_GPUS}, or null`;
const TIMEOUT_EXPECTED = `expected a start timeout in ms from 0 to ${MAX_START_TIMEOUT_MS}, or null`;

/** Body of PUT /api/queues/{name}: the queue's settings; a field left out is null (no limit, no default). */
export const PutQueueSchema = named(
  z.strictObject({
    maxRunning: z
      .int({ error: `expected an integer from 1 to ${MAX_QUEUE_RUNNING}, or null` })
      .min(1, { error: `expected an integer from 1 to ${MAX_QUEUE_RUNNING}, or null` })
      .max(MAX_QUEUE_RUNNING, { error: `expected an integer from 1 to ${MAX_QUEUE_RUNNING}, or null` })
      .nullable()
      .optional()
      .meta({ description: 'Jobs of the queue running at once (STARTING, RUNNING, RECOVERING, CANCELLING); null: no limit.' }),
    maxCpus: z
      .number({ error: `expected a CPU count above 0 and at most ${MAX_QUEUE_CPUS}, or null` })
      .positive({ error: `expected a CPU count above 0 and at most ${MAX_QUEUE_CPUS}, or null` })
      .max(MAX_QUEUE_CPUS, { error: `expected a CPU count above 0 and at most ${MAX_QUEUE_CPUS}, or null` })
      .nullable()
      .optional()
      .meta({ description: "CPUs the queue's running jobs hold at once; null: no limit." }),
    maxGpus: z.number({ error: GPUS_EXPECTED }).positive({ error: GPUS_EXPECTED }).max(MAX_QUEUE_GPUS, { error: GPUS_EXPECTED }).nullable().optional()
      .meta({ description: "GPUs the queue's running jobs hold at once (a share of one GPU counts as its fraction); null: no limit." }),
    startTimeoutMs: z.int({ error: TIMEOUT_EXPECTED }).min(0, { error: TIMEOUT_EXPECTED }).max(MAX_START_TIMEOUT_MS, { error: TIMEOUT_EXPECTED }).nullable().optional()
      .meta({ description: "A job of the queue that cannot start within this (ms) ends FAILED_NO_RESOURCE; null: the server's JOBDECK_START_TIMEOUT_MS (none by default)." }),
    defaultPriority: PrioritySchema.nullable().optional().meta({ description: `Priority of a job of the queue that gives none; null: ${PRIORITY.default}.` }),
    memberMaxPriority: PrioritySchema.nullable().optional().meta({ description: "Highest priority a member may give the queue's jobs (below the role's cap, JOBDECK_QUOTA_MEMBER_MAX_PRIORITY); null: the role's cap only. Admins are not capped." }),
  }),
  'PutQueueRequest',
  `PUT /api/queues/{name} JSON body (a field left out is null). The "${DEFAULT_QUEUE}" queue has no settings.`,
);
