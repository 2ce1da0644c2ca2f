/**
 * The job's story as banners in the log viewer: where each attempt starts and how it ends, each
 * restart ("restart 1 of 1"), the move to the next task, a task cancelled before it ever ran,
 * and how the job ended. The same events the CLI prints (docs/design.md §5 rule 11), drawn from the
 * job stream's control messages. Pure, browser-safe.
 */
import type { StreamMessage } from '../api/types';
import type { JobStatus } from '../jobs/status';
import type { BannerTone } from './log-buffer';

/** What the story needs to know about the job besides the message itself. */
export interface StoryContext {
  /** Number of tasks in the pipeline (1 for a single command). */
  taskCount: number;
  /** Task names by index (null when unnamed). */
  taskNames: (string | null)[];
  /** Tasks that have had at least one attempt. */
  tasksWithAttempts: Set<number>;
  /** The job's last status reason (from `job` messages), shown with the final banner. */
  jobReason: string | null;
}

/** A banner to add (the key dedups repeats after a resume). */
export interface Banner {
  key: string;
  tone: BannerTone;
  text: string;
  task: number | null;
  attempt: number | null;
}

/**
 * "Task 1 (train)" — the task's 0-based index, as everywhere in jobdeck (server reasons, CLI,
 * API `index`; SkyPilot's queue numbers tasks the same way). "Task 0" alone when unnamed.
 */
export function taskLabel(ctx: StoryContext, task: number): string {
  const name = ctx.taskNames[task];
  return name ? `Task ${task} (${name})` : `Task ${task}`;
}

/** "Task 1 (train), attempt 1" in a pipeline; just "Attempt 1" in a one-task job. */
export function attemptLabel(ctx: StoryContext, task: number, attempt: number): string {
  return ctx.taskCount > 1 ? `${taskLabel(ctx, task)}, attempt ${attempt}` : `Attempt ${attempt}`;
}

const withReason = (text: string, reason: string | null) => (reason ? `${text} — ${reason}` : text);

/** A reason that only restates the exit code ("run exited with code 3") adds nothing to "failed with exit code 3". */
function extraReason(reason: string | null, exitCode: number | null): string | null {
  if (!reason) return null;
  if (exitCode !== null && /^(run|setup)?\s*exited with (exit )?code -?\d+$/i.test(reason.trim())) return null;
  return reason;
}

/** The banner tone of each job status (the job's end banner). */
const JOB_TONE: { readonly [S in JobStatus]: BannerTone } = {
  PENDING: 'info',
  STARTING: 'info',
  RUNNING: 'info',
  RECOVERING: 'info',
  CANCELLING: 'warning',
  SUCCEEDED: 'success',
  CANCELLED: 'warning',
  FAILED: 'error',
  FAILED_SETUP: 'error',
  FAILED_PRECHECKS: 'error',
  FAILED_NO_RESOURCE: 'error',
  FAILED_CONTROLLER: 'error',
};

/** Tone of a final job status (JOB_TONE); a name this page does not know is an error when it says FAILED…, else info. */
export function toneOfStatus(status: string): BannerTone {
  if (Object.hasOwn(JOB_TONE, status)) return JOB_TONE[status as JobStatus];
  return status.startsWith('FAILED') ? 'error' : 'info';
}

/**
 * The banner a control message adds, or null. Also updates `ctx` (task names, tasks with
 * attempts, the job's reason) from the message.
 */
export function bannerFor(msg: StreamMessage, ctx: StoryContext): Banner | null {
  switch (msg.type) {
    case 'hello': {
      ctx.taskCount = msg.job.taskCount;
      ctx.taskNames = msg.job.tasks.map((t) => t.name);
      for (const t of msg.job.tasks) if (t.attempts > 0) ctx.tasksWithAttempts.add(t.index);
      if (msg.job.statusReason) ctx.jobReason = msg.job.statusReason;
      return null;
    }
    case 'job':
      ctx.jobReason = msg.reason;
      return null;
    case 'task': {
      if (msg.name !== undefined && msg.name !== null) ctx.taskNames[msg.task] = msg.name;
      if (msg.status === 'CANCELLED' && !ctx.tasksWithAttempts.has(msg.task)) {
        return { key: `task-cancelled:${msg.task}`, tone: 'warning', text: `${taskLabel(ctx, msg.task)} cancelled — it never started`, task: null, attempt: null };
      }
      return null;
    }
    case 'attempt': {
      const { task, attempt } = msg;
      const label = attemptLabel(ctx, task, attempt);
      const reason = extraReason(msg.reason, msg.exitCode);
      if (msg.phase === 'start') {
        ctx.tasksWithAttempts.add(task);
        const key = `start:${task}:${attempt}`;
        if (msg.cause === 'restart') {
          const r = msg.restart ? `Restart ${msg.restart.n} of ${msg.restart.max}` : 'Restart';
          return { key, tone: 'warning', text: `${r} — ${ctx.taskCount > 1 ? label : label.toLowerCase()} started`, task, attempt };
        }
        if (msg.cause === 'recovery') {
          return { key, tone: 'warning', text: withReason(`Recovery — ${ctx.taskCount > 1 ? label : label.toLowerCase()} started (the previous attempt was lost)`, msg.reason), task, attempt };
        }
        const prefix = task > 0 ? 'Next task: ' : '';
        return { key, tone: 'info', text: `${prefix}${label} started`, task, attempt };
      }
      const key = `end:${task}:${attempt}`;
      const code = msg.exitCode === null ? '' : ` with exit code ${msg.exitCode}`;
      const status = msg.status;
      switch (status) {
        case 'SUCCEEDED':
          return { key, tone: 'success', text: `${label} succeeded${msg.exitCode === null ? '' : ` (exit code ${msg.exitCode})`}`, task, attempt };
        case 'FAILED':
          return { key, tone: 'error', text: withReason(`${label} failed${code}`, reason), task, attempt };
        case 'FAILED_SETUP':
          return { key, tone: 'error', text: withReason(`${label}: setup failed${code}`, reason), task, attempt };
        case 'CANCELLED':
          return { key, tone: 'warning', text: withReason(`${label} cancelled`, reason), task, attempt };
        case 'LOST':
          return { key, tone: 'warning', text: withReason(`${label} lost`, reason), task, attempt };
        case 'STARTING':
        case 'RUNNING':
        case 'CANCELLING':
          return { key, tone: 'info', text: withReason(`${label} ended (${status})${code}`, reason), task, attempt };
        default: {
          // Every AttemptStatus has its case above (tsc checks); only a newer server's name lands here.
          const unknown: never = status;
          return { key, tone: 'info', text: withReason(`${label} ended (${String(unknown)})${code}`, reason), task, attempt };
        }
      }
    }
    case 'end':
      return { key: 'job-end', tone: toneOfStatus(msg.status), text: withReason(`Job ended: ${msg.status}`, ctx.jobReason), task: null, attempt: null };
    case 'error':
    case 'times':
      return null;
  }
}
