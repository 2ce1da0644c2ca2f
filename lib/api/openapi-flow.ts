/**
 * The OpenAPI paths of groups and schedules (lib/api/groups.ts, schedules.ts; docs/design.md §17,
 * §19), merged into the document by lib/api/openapi.ts. Their views are the named components of
 * lib/api/schemas-flow.ts; the request bodies are converted from the schemas the routes validate
 * with. Which role may call each is in lib/auth/rules.ts (a member: its own groups and schedules).
 */
import { z } from 'zod';
import { CreateScheduleSchema, PatchScheduleSchema } from './schemas-flow';

type Json = Record<string, unknown>;

const ref = (id: string): Json => ({ $ref: `#/components/schemas/${id}` });
const problem = (description: string): Json => ({ description, content: { 'application/problem+json': { schema: ref('Problem') } } });
const ok = (description: string, schema: Json): Json => ({ description, content: { 'application/json': { schema } } });
const inline = (schema: z.ZodType): Json => {
  const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  delete js.$schema;
  return js;
};
const body = (schema: z.ZodType): Json => ({ required: true, content: { 'application/json': { schema: inline(schema) } } });
const groupId = { name: 'id', in: 'path', required: true, description: 'Group id (a positive integer).', schema: { type: 'integer', minimum: 1 } };
const scheduleName = { name: 'name', in: 'path', required: true, description: 'Schedule name.', schema: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,62}$' } };
const E400 = problem('A bad field or spec (file:line in issues).');
const E403 = problem('A member and another user\u2019s group or schedule, or a viewer.');
const E404 = problem('No such group or schedule.');
const FIRE = { type: 'object', properties: { outcome: { type: 'string', enum: ['submitted', 'skipped', 'error'] }, jobId: { type: ['integer', 'null'] }, detail: { type: ['string', 'null'] } }, required: ['outcome', 'jobId', 'detail'] };

/** Paths of /api/groups and /api/schedules. */
export function flowPaths(): Record<string, Json> {
  const op = (operationId: string, summary: string, tag: string, rest: Json): Json => ({ operationId, summary, tags: [tag], ...rest });
  return {
    '/api/groups': {
      get: op('listGroups', 'Groups (arrays, sweeps), newest first, with their counts by status', 'groups', {
        parameters: [
          { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
          { name: 'before', in: 'query', required: false, description: 'The `next` of the previous page.', schema: { type: 'integer', minimum: 1 } },
          { name: 'mine', in: 'query', required: false, schema: { type: 'string', enum: ['1', 'true', '0', 'false'] } },
        ],
        responses: { 200: ok('A page of groups.', { type: 'object', properties: { groups: { type: 'array', items: ref('GroupSummary') }, next: { type: ['integer', 'null'] } } }), 400: E400 },
      }),
    },
    '/api/groups/{id}': {
      get: op('getGroup', 'A group and the latest job of each slot', 'groups', { parameters: [groupId], responses: { 200: ok('The group.', ref('GroupDetail')), 400: E400, 404: E404 } }),
      delete: op('deleteGroup', 'Delete a group and all its jobs (once none is live)', 'groups', {
        parameters: [groupId],
        responses: { 200: ok('The jobs deleted.', { type: 'object', properties: { deleted: { type: 'array', items: { type: 'integer' } } } }), 403: E403, 404: E404, 409: problem('A job of the group is not finished: cancel the group first.') },
      }),
    },
    '/api/groups/{id}/cancel': {
      post: op('cancelGroup', 'Cancel every job of the group not finished yet', 'groups', { parameters: [groupId], responses: { 200: ok('What the cancel did to each job.', ref('CancelResult')), 403: E403, 404: E404 } }),
    },
    '/api/groups/{id}/rerun-failed': {
      post: op('rerunFailedInGroup', 'Re-run each slot whose latest job ended without succeeding', 'groups', {
        parameters: [groupId],
        requestBody: { required: false, content: { 'application/json': { schema: ref('RerunRequest') } } },
        responses: {
          201: ok('The new jobs by slot.', { type: 'object', properties: { rerun: { type: 'array', items: { type: 'object', properties: { index: { type: 'integer' }, from: { type: 'integer' }, jobId: { type: 'integer' } } } } } }),
          400: E400,
          403: E403,
          404: E404,
          429: problem('The pending quota is reached (the slots before it were re-run).'),
        },
      }),
    },
    '/api/schedules': {
      get: op('listSchedules', 'Every schedule (mine=1: the caller\u2019s)', 'schedules', {
        parameters: [{ name: 'mine', in: 'query', required: false, schema: { type: 'string', enum: ['1', 'true'] } }],
        responses: { 200: ok('The schedules.', { type: 'object', properties: { schedules: { type: 'array', items: ref('Schedule') } } }) },
      }),
      post: op('createSchedule', 'Create a schedule owned by the caller', 'schedules', { requestBody: body(CreateScheduleSchema), responses: { 201: ok('The schedule.', ref('Schedule')), 400: E400, 403: E403 } }),
    },
    '/api/schedules/{name}': {
      get: op('getSchedule', 'A schedule with its latest fires', 'schedules', { parameters: [scheduleName], responses: { 200: ok('The schedule.', ref('Schedule')), 400: E400, 404: E404 } }),
      patch: op('patchSchedule', 'Change a schedule (any field but the name)', 'schedules', { parameters: [scheduleName], requestBody: body(PatchScheduleSchema), responses: { 200: ok('The schedule.', ref('Schedule')), 400: E400, 403: E403, 404: E404 } }),
      delete: op('deleteSchedule', 'Delete a schedule (its jobs stay)', 'schedules', { parameters: [scheduleName], responses: { 204: { description: 'Deleted.' }, 403: E403, 404: E404 } }),
    },
    '/api/schedules/{name}/pause': {
      post: op('pauseSchedule', 'Pause a schedule: no fire until resumed', 'schedules', { parameters: [scheduleName], responses: { 200: ok('The schedule.', ref('Schedule')), 403: E403, 404: E404 } }),
    },
    '/api/schedules/{name}/resume': {
      post: op('resumeSchedule', 'Resume a schedule: its next fire is the first cron time from now', 'schedules', { parameters: [scheduleName], responses: { 200: ok('The schedule.', ref('Schedule')), 403: E403, 404: E404 } }),
    },
    '/api/schedules/{name}/run': {
      post: op('runSchedule', 'Fire a schedule now (its overlap policy applies; its next fire time stays)', 'schedules', {
        parameters: [scheduleName],
        responses: { 200: ok('Skipped or refused (outcome, detail).', FIRE), 201: ok('Submitted (jobId).', FIRE), 403: E403, 404: E404 },
      }),
    },
  };
}
