/**
 * The zod schemas of the webhook API (/api/webhooks…, /api/jobs/{id}/notifications; docs/design.md
 * §10 "Webhooks"): requests (bounded: name, URL length, the events enum, glob length, metadata
 * filter size) and answers; registered as OpenAPI components like lib/api/schemas.ts. No answer
 * carries a secret but the create and rotate answers, once.
 */
import { z } from 'zod';
import { WEBHOOK_EVENTS } from '../store';
import { isoTime, MetadataSchema, named } from './schemas';
import type { DeliveryView, WebhookView } from './types';

/** Longest URL of a subscription (also checked by lib/monitor/webhooks/url.ts). */
export const MAX_WEBHOOK_URL_LENGTH = 2048;
/** Longest job name glob. */
export const MAX_WEBHOOK_GLOB = 200;
/** Most operator subscriptions a server holds. */
export const MAX_WEBHOOKS = 100;
/** Largest page of a delivery log. */
export const MAX_DELIVERY_LIMIT = 200;

const NAME_EXPECTED = '1–63 characters: a–z, 0–9, - and _, starting with a letter or digit';

/** A subscription's name (also its path segment). */
export const WebhookNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, { error: `expected ${NAME_EXPECTED}` })
  .meta({ description: `Subscription name (${NAME_EXPECTED}).` });

const EVENT_VALUES = [...WEBHOOK_EVENTS, '*'] as const;
const EventSchema = z.enum(EVENT_VALUES, { error: (iss) => `unknown event "${String(iss.input)}"; valid events: ${EVENT_VALUES.join(', ')}` });
const EventsSchema = z.array(EventSchema).min(1, { error: 'give at least one event' }).max(EVENT_VALUES.length);
const UrlSchema = z.string().min(1).max(MAX_WEBHOOK_URL_LENGTH, { error: `at most ${MAX_WEBHOOK_URL_LENGTH} characters` }).meta({ description: 'http(s) URL; private and loopback addresses are refused unless JOBDECK_WEBHOOK_ALLOW_PRIVATE=1.' });
const GlobSchema = z
  .string()
  .min(1)
  .max(MAX_WEBHOOK_GLOB, { error: `at most ${MAX_WEBHOOK_GLOB} characters` })
  .regex(/^[^\u0000-\u001f]*$/, { error: 'no control characters' })
  .meta({ description: 'Only jobs whose name matches this glob (`*` any run of characters, `?` one).' });
const FormatSchema = z.enum(['json', 'slack'], { error: 'expected "json" or "slack"' });

/** Body of POST /api/webhooks. */
export const CreateWebhookSchema = named(
  z.strictObject({
    name: WebhookNameSchema,
    url: UrlSchema,
    events: EventsSchema,
    jobNameGlob: GlobSchema.nullable().optional(),
    metadataFilter: MetadataSchema.nullable().optional().meta({ description: 'Only jobs whose metadata contains this object.' }),
    namedOnly: z.boolean().optional().meta({ description: 'Only jobs whose spec names it (notify: [name]); the filters do not apply then.' }),
    format: FormatSchema.optional().meta({ description: 'json (default) or slack.' }),
    enabled: z.boolean().optional(),
  }),
  'CreateWebhookRequest',
  'A new subscription.',
);

/** Body of PATCH /api/webhooks/{name}: the fields to change. */
export const PatchWebhookSchema = named(
  z.strictObject({
    url: UrlSchema.optional(),
    events: EventsSchema.optional(),
    jobNameGlob: GlobSchema.nullable().optional(),
    metadataFilter: MetadataSchema.nullable().optional(),
    namedOnly: z.boolean().optional(),
    format: FormatSchema.optional(),
    enabled: z.boolean().optional(),
  }),
  'PatchWebhookRequest',
  'Fields of a subscription to change (enabled: true clears the reason it was disabled).',
);

/** Query of GET /api/webhooks/{name}/deliveries and /api/jobs/{id}/notifications. */
export const DeliveryQuerySchema = z.object({
  limit: z
    .string()
    .regex(/^[0-9]{1,4}$/, { error: `limit must be an integer from 1 to ${MAX_DELIVERY_LIMIT}` })
    .transform(Number)
    .refine((n) => n >= 1 && n <= MAX_DELIVERY_LIMIT, { error: `limit must be an integer from 1 to ${MAX_DELIVERY_LIMIT}` })
    .optional()
    .meta({ description: `How many (1–${MAX_DELIVERY_LIMIT}, default 50), newest first.` }),
});

/** Path parameter of a delivery. */
export const DeliveryIdSchema = z.string().regex(/^msg_[0-9a-f]{32}$/, { error: 'expected a delivery id (msg_ and 32 hex digits)' });

export const WebhookViewSchema = named(
  z.object({
    id: z.number().int(),
    name: z.string(),
    owner: z.string().nullable().meta({ description: 'The name of the user who created it; null: none recorded.' }),
    url: z.string(),
    events: z.array(z.string()),
    jobNameGlob: z.string().nullable(),
    metadataFilter: z.record(z.string(), z.unknown()).nullable(),
    namedOnly: z.boolean(),
    format: z.string(),
    enabled: z.boolean(),
    disabledReason: z.string().nullable(),
    createdAt: isoTime(),
    updatedAt: isoTime(),
  }),
  'Webhook',
  'A subscription (its secret is never shown after create / rotate).',
);

export const WebhookListSchema = named(z.object({ webhooks: z.array(WebhookViewSchema) }), 'WebhookList', 'Every subscription, by name.');
export const WebhookSecretSchema = named(
  z.object({ webhook: WebhookViewSchema, secret: z.string().meta({ description: 'The signing secret (whsec_…), shown this once.' }) }),
  'WebhookWithSecret',
  'A subscription and its new signing secret (shown only in this answer).',
);

export const DeliveryViewSchema = named(
  z.object({
    id: z.string().meta({ description: 'The delivery id: the webhook-id header of every try.' }),
    subscription: z.string(),
    eventType: z.string(),
    jobId: z.number().int().nullable(),
    jobEventId: z.number().int().nullable(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number().int(),
    nextAttemptAt: isoTime().nullable(),
    lastStatusCode: z.number().int().nullable(),
    lastLatencyMs: z.number().int().nullable(),
    lastError: z.string().nullable(),
    responseHead: z.string().nullable().meta({ description: "The last answer's first ≤ 1 KiB." }),
    createdAt: isoTime(),
    deliveredAt: isoTime().nullable(),
  }),
  'WebhookDelivery',
  'One notification and its last try.',
);

export const DeliveryListSchema = named(z.object({ deliveries: z.array(DeliveryViewSchema) }), 'WebhookDeliveryList', 'Deliveries, newest first (a job\'s: oldest first).');

export type { DeliveryView, WebhookView };

// Compile-time: the schemas and the TypeScript contract (lib/api/types.ts) agree.
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Check<T extends true> = T;
export type WebhookSchemaChecks = [Check<Equals<z.infer<typeof WebhookViewSchema>, WebhookView>>, Check<Equals<z.infer<typeof DeliveryViewSchema>, DeliveryView>>];
