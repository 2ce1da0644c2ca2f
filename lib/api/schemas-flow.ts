/**
 * The API's schemas of groups and schedules (docs/design.md §17, §19): their views and the
 * request bodies, checked against lib/api/types.ts at compile time like schemas.ts's.
 */
import { z } from 'zod';
import { JOB_STATUSES } from '../jobs/status';
import { CATCH_UP_RULES, MAX_CRON_LENGTH, OVERLAP_POLICIES, SCHEDULE_NAME } from '../jobs/schedule';
import { AFTER_MODES, ARRAY_LIMITS, MAX_DEPENDS_ON, PRIORITY, QUEUE_NAME } from '../jobs/spec';
import { named } from './schema-registry';
import type { GroupDetail, GroupSummary, ScheduleFireView, ScheduleView } from './types';

const time = () => z.string().meta({ format: 'date-time' });
const n = () => z.number().int().min(0);

const groupShape = {
  id: z.number().int().min(1),
  name: z.string(),
  size: n().meta({ description: 'Its slots (jobs at submit).' }),
  counts: z.partialRecord(z.enum(JOB_STATUSES), n()).meta({ description: 'The latest job of each slot counted by status (a re-run takes its slot).' }),
  done: n().meta({ description: 'Slots whose latest job is terminal.' }),
  jobId: z.number().int().meta({ description: 'Its first job: the folded list\'s row.' }),
  owner: z.string().nullable(),
  submittedAt: time(),
  array: z.object({ numJobs: n(), params: z.record(z.string(), z.array(z.string())) }).meta({ description: 'What it was submitted with.' }),
};

export const GroupSummarySchema = named(z.object(groupShape), 'GroupSummary', 'A group of jobs submitted together (an array or sweep).');

export const GroupDetailSchema = named(
  z.object({
    ...groupShape,
    slots: z.array(z.object({ index: n(), jobId: z.number().int(), name: z.string(), status: z.enum(JOB_STATUSES), runs: n().meta({ description: 'Jobs the slot has had (1 + its re-runs).' }) })),
  }),
  'GroupDetail',
  'GET /api/groups/{id}: the group and the latest job of each slot.',
);

export const ScheduleFireSchema = named(
  z.object({
    fireAt: time().meta({ description: 'The cron time fired (a run now: its moment).' }),
    kind: z.enum(['cron', 'catch_up', 'manual']),
    outcome: z.enum(['submitted', 'skipped', 'error']),
    jobId: z.number().int().nullable(),
    detail: z.string().nullable(),
    at: time(),
  }),
  'ScheduleFire',
  'One fire of a schedule.',
);

export const ScheduleViewSchema = named(
  z.object({
    id: z.number().int(),
    name: z.string(),
    owner: z.string().nullable(),
    cron: z.string(),
    timezone: z.string(),
    specYaml: z.string().nullable().meta({ description: 'The spec it submits (secrets masked); null when it re-runs a job.' }),
    jobId: z.number().int().nullable().meta({ description: 'The job it re-runs at each fire; null with a spec.' }),
    overlap: z.enum(OVERLAP_POLICIES),
    catchUp: z.enum(CATCH_UP_RULES),
    paused: z.boolean(),
    nextFireAt: time().nullable(),
    lastFireAt: time().nullable(),
    lastJobId: z.number().int().nullable(),
    lastOutcome: z.string().nullable(),
    createdAt: time(),
    fires: z.array(ScheduleFireSchema).meta({ description: 'The latest fires, newest first (a schedule\'s own GET; empty in the list).' }),
  }),
  'Schedule',
  'A schedule: a spec (or a job to re-run) submitted on a cron expression.',
);

const LaunchSchema = z.strictObject({
  name: z.string().min(1).max(128).optional(),
  envs: z.record(z.string().max(128), z.string().max(65536)).optional(),
  queue: z.string().regex(QUEUE_NAME).optional(),
  priority: z.number().int().min(PRIORITY.min).max(PRIORITY.max).optional(),
});

const scheduleFields = {
  cron: z.string().min(1).max(MAX_CRON_LENGTH).meta({ description: 'Five fields (minute hour day month weekday), e.g. "0 3 * * *".' }),
  timezone: z.string().min(1).max(64).optional().meta({ description: 'IANA time zone (default UTC).' }),
  yaml: z.string().max(256 * 1024).optional().meta({ description: 'The spec to submit at each fire; or jobId.' }),
  filename: z.string().max(256).optional(),
  jobId: z.number().int().min(1).max(2_147_483_647).optional().meta({ description: 'Re-run this job at each fire; or yaml.' }),
  launch: LaunchSchema.optional(),
  overlap: z.enum(OVERLAP_POLICIES).optional().meta({ description: 'While an earlier run is live: skip the fire (default), allow it, or cancel_previous.' }),
  catchUp: z.enum(CATCH_UP_RULES).optional().meta({ description: 'After downtime: run the last missed time once (default) or none.' }),
  paused: z.boolean().optional(),
};

/** POST /api/schedules. */
export const CreateScheduleSchema = z.strictObject({ name: z.string().regex(SCHEDULE_NAME, { error: 'name: 1–63 characters: a–z, 0–9, - and _, starting with a letter or digit' }), ...scheduleFields });

/** PATCH /api/schedules/{name}: any field but the name. */
export const PatchScheduleSchema = z.strictObject({ ...scheduleFields, cron: scheduleFields.cron.optional() });

// Compile-time: the schemas and lib/api/types.ts describe the same shapes.
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Check<T extends true> = T;
export type FlowSchemaTypeChecks = [
  Check<Equals<z.infer<typeof GroupSummarySchema>, GroupSummary>>,
  Check<Equals<z.infer<typeof GroupDetailSchema>, GroupDetail>>,
  Check<Equals<z.infer<typeof ScheduleFireSchema>, ScheduleFireView>>,
  Check<Equals<z.infer<typeof ScheduleViewSchema>, ScheduleView>>,
];

/** The array and dependency fields of POST /api/jobs (the spec's `array` and `depends_on`; they win over the spec's). */
export const submitFlowFields = {
  numJobs: z.number().int().min(1).max(ARRAY_LIMITS.maxJobs).meta({ description: `Submit as a group of this many jobs per parameter combination (SkyPilot's --num-jobs; at most ${ARRAY_LIMITS.maxJobs} jobs in all).` }).optional(),
  params: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'params: a parameter name is letters, digits and _, not starting with a digit' }), z.array(z.string().max(ARRAY_LIMITS.maxValueLength)).min(1).max(ARRAY_LIMITS.maxValues))
    .meta({ description: 'A sweep: each parameter\'s values; one job per combination (the cartesian product), each value in its env var and the job\'s name.' })
    .optional(),
  dependsOn: z
    .strictObject({ jobs: z.array(z.union([z.number().int().min(1), z.string().min(1).max(128)])).min(1).max(MAX_DEPENDS_ON), after: z.enum(AFTER_MODES).optional() })
    .meta({ description: 'Jobs (ids, or names: the submitter\'s most recent job or group of that name) this job waits for, and when: ok (succeeded; default), failed, any.' })
    .optional(),
};
