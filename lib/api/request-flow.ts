/**
 * Request parsing of the group and schedule routes (docs/design.md §17, §19): path parameters,
 * list queries and bodies, validated and bounded with the messages naming the field.
 */
import { z } from 'zod';
import type { ScheduleInput } from '../control';
import { SCHEDULE_NAME } from '../jobs/schedule';
import { badRequest } from './errors';
import { readBody } from './body';
import { bodyKind, parseJson, validate } from './request';
import { CreateScheduleSchema, PatchScheduleSchema } from './schemas-flow';

const GroupIdSchema = z.coerce.number({ error: 'group id must be a positive integer' }).int({ error: 'group id must be a positive integer' }).min(1, { error: 'group id must be a positive integer' }).max(2_147_483_647, { error: 'group id must be a positive integer' });

/** The group id of a path like /api/groups/{id}. @throws ApiError 400 */
export function parseGroupId(raw: string | undefined): number {
  if (!/^[0-9]{1,10}$/.test(raw ?? '')) throw badRequest(`group id must be a positive integer, got ${JSON.stringify((raw ?? '').slice(0, 40))}`);
  return validate(GroupIdSchema, raw, 'path');
}

/** The schedule name of a path like /api/schedules/{name}. @throws ApiError 400 */
export function parseScheduleName(raw: string | undefined): string {
  if (!SCHEDULE_NAME.test(raw ?? '')) throw badRequest(`schedule name must be 1–63 characters: a–z, 0–9, - and _, starting with a letter or digit; got ${JSON.stringify((raw ?? '').slice(0, 70))}`);
  return raw!;
}

const GroupListQuerySchema = z.object({
  limit: z.coerce.number({ error: 'limit must be an integer from 1 to 200' }).int().min(1, { error: 'limit must be an integer from 1 to 200' }).max(200, { error: 'limit must be an integer from 1 to 200' }).default(50),
  before: GroupIdSchema.optional(),
  mine: z.enum(['1', 'true', '0', 'false']).optional(),
});

/** GET /api/groups's query. @throws ApiError 400 */
export function parseGroupListQuery(url: URL): { limit: number; before?: number; mine: boolean } {
  const sp = url.searchParams;
  const q = validate(GroupListQuerySchema, { limit: sp.get('limit') ?? undefined, before: sp.get('before') ?? undefined, mine: sp.get('mine') ?? undefined }, 'query');
  return { limit: q.limit, before: q.before, mine: q.mine === '1' || q.mine === 'true' };
}

async function jsonBody(req: Request): Promise<unknown> {
  bodyKind(req, ['json']);
  return parseJson(await readBody(req));
}

/** POST /api/schedules's body. @throws ApiError 400, 413 */
export async function parseCreateSchedule(req: Request): Promise<ScheduleInput> {
  return validate(CreateScheduleSchema, await jsonBody(req), 'request body');
}

/** PATCH /api/schedules/{name}'s body. @throws ApiError 400, 413 */
export async function parsePatchSchedule(req: Request): Promise<Partial<Omit<ScheduleInput, 'name'>>> {
  return validate(PatchScheduleSchema, await jsonBody(req), 'request body');
}
