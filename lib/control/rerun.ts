/**
 * Re-run: submit again exactly what a job was submitted with — its YAML as stored (secrets
 * included: the store keeps them, only views mask them), its launch overrides (name, envs, the
 * file name, the queue, the priority given at launch or set while pending), its metadata — as a new job. The one re-run of the API, the CLI and the
 * dashboard's buttons, so a re-run never depends on what a view shows (a masked secret, a name
 * the YAML does not hold). A re-run may change three things of that submission (`jobdeck rerun
 * ID --env K=V -n NAME --priority N`, the API's `envs`, `name`, `priority`): env vars merged
 * over the ones given at launch (each given one wins), the name, the priority — checked as at a
 * submit (spec rules, the priority's range and a member's cap).
 */
import type { SubmitOrigin } from '../jobs/origin';
import type { Actor } from '../jobs/roles';
import { jobSubmission, type Store } from '../store';
import { submitJobSpec, type LaunchOverrides, type SubmitOutcome } from './submit';

/** A job to re-run does not exist. */
export class JobNotFoundError extends Error {
  constructor(readonly jobId: number) {
    super(`job ${jobId} not found`);
    this.name = 'JobNotFoundError';
  }
}

/** What a re-run changes of the job's submission (each absent: as it was submitted). */
export interface RerunOverrides {
  /** The job name (wins over the launch's and the file's). */
  name?: string;
  /** Env vars merged over the launch's (each wins), applied to every task like `--env`. */
  envs?: Record<string, string>;
  /** Admission priority 0–1000 (wins over the launch's and the file's). */
  priority?: number;
}

/** Job.launch as stored, keeping only the keys of LaunchOverrides with their types (a re-run, a schedule re-running a job). */
export function storedLaunch(json: unknown): LaunchOverrides {
  const l = (json && typeof json === 'object' ? json : {}) as Record<string, unknown>;
  const out: LaunchOverrides = {};
  if (typeof l.name === 'string') out.name = l.name;
  if (l.envs && typeof l.envs === 'object' && !Array.isArray(l.envs)) out.envs = l.envs as Record<string, string>;
  if (l.secrets && typeof l.secrets === 'object' && !Array.isArray(l.secrets)) out.secrets = l.secrets as Record<string, string>;
  if (typeof l.workdirUpload === 'string') out.workdirUpload = l.workdirUpload;
  if (l.fileMountUploads && typeof l.fileMountUploads === 'object' && !Array.isArray(l.fileMountUploads)) out.fileMountUploads = l.fileMountUploads as LaunchOverrides['fileMountUploads'];
  if (typeof l.filename === 'string') out.filename = l.filename;
  if (typeof l.queue === 'string') out.queue = l.queue;
  if (typeof l.priority === 'number' && Number.isInteger(l.priority)) out.priority = l.priority;
  if (l.slot && typeof l.slot === 'object' && !Array.isArray(l.slot)) out.slot = l.slot as Record<string, string>;
  return out;
}

/**
 * Submits job `id` again as a new job (no submissionId: each re-run is a new job); a job of a
 * group (an array) is re-run into its slot of that group, with its slot's envs. The new job's
 * spec is the same as the old one's (same specHash) unless the server's rules changed between
 * the two submits (then it fails as any submit would).
 * @param origin what asks for the re-run (the new job's origin).
 * @param actor who re-runs it (the new job's submitter); callers check it may (ownership.ts).
 * @param overrides what changes (see RerunOverrides); the priority's range is the caller's to check.
 * @throws JobNotFoundError; SpecError when the stored spec no longer validates (or an override breaks a rule).
 */
export async function rerunJob(store: Store, id: number, origin: SubmitOrigin, actor?: Actor, overrides: RerunOverrides = {}): Promise<SubmitOutcome> {
  const job = await jobSubmission(store, id);
  if (!job) throw new JobNotFoundError(id);
  const launch = storedLaunch(job.launch);
  const envs = overrides.envs && Object.keys(overrides.envs).length ? { ...launch.envs, ...overrides.envs } : launch.envs;
  return submitJobSpec(store, {
    source: { kind: 'yaml', text: job.specYaml, filename: launch.filename },
    name: overrides.name ?? launch.name,
    envs,
    // Secrets given at launch are reused here, server-side: the client never sees them.
    secrets: launch.secrets,
    // The stored upload again (once per content hash): nothing is uploaded twice.
    workdirUpload: launch.workdirUpload,
    fileMountUploads: launch.fileMountUploads,
    // The caller checked that the actor may re-run this job: its uploads go with it.
    uploadsOfRerun: true,
    queue: launch.queue,
    priority: overrides.priority ?? launch.priority,
    metadata: job.metadata && typeof job.metadata === 'object' && !Array.isArray(job.metadata) ? (job.metadata as Record<string, unknown>) : null,
    origin,
    actor,
    // A job of a group is re-run into its slot: the group counts the new job in its place.
    ...(job.groupId !== null && job.groupIndex !== null ? { group: { id: job.groupId, index: job.groupIndex, envs: launch.slot } } : {}),
  });
}
