'use client';
/**
 * The job page's "Spec" tab: what was submitted — where from (CLI, API, dashboard), the name and
 * envs given at launch beside the YAML, the uploaded folder (its size and file list), each task's
 * command, setup, workdir, resources and envs — and the YAML as submitted. Secrets show as the API shows them: masked ("••••••") in the YAML,
 * the task envs and the launch envs alike (lib/api/mask.ts does it before the page sees them).
 */
import type { JobDetail, TaskView } from '@/lib/api/types';
import { taskDisplayName } from './Pipeline';

const ORIGIN_LABEL: Record<JobDetail['origin'], string> = { cli: 'the CLI (jobdeck launch)', api: 'the API', dashboard: 'the dashboard', schedule: 'a schedule' };

/** "2 CPUs", "2+ CPUs", "· 8+ GB memory", "· 3 nodes" — a task's resources in words. */
export function resourcesText(t: Pick<TaskView, 'resources' | 'nodes'>): string {
  const r = t.resources;
  const parts = [`${r.cpus}${r.cpusAtLeast ? '+' : ''} CPU${r.cpus === 1 && !r.cpusAtLeast ? '' : 's'}`];
  if (r.memoryGb !== null) parts.push(`${r.memoryGb}${r.memoryAtLeast ? '+' : ''} GB memory`);
  if (t.nodes) parts.push(`${t.nodes} nodes`);
  return parts.join(' · ');
}

function Envs({ envs, label }: { envs: Record<string, string>; label: string }) {
  const keys = Object.keys(envs).sort();
  if (keys.length === 0) return null;
  return (
    <div>
      <dt>{label}</dt>
      <dd>
        <ul className="spec-envs">
          {keys.map((k) => (
            <li key={k} className="mono">
              {k}={envs[k]}
            </li>
          ))}
        </ul>
      </dd>
    </div>
  );
}

function TaskSummary({ job, task }: { job: JobDetail; task: TaskView }) {
  const name = taskDisplayName(task, { name: job.name, taskCount: job.tasks.length });
  return (
    <section className="spec-task" aria-label={`Task ${task.index} spec`} data-testid={`spec-task-${task.index}`}>
      {job.tasks.length > 1 && (
        <h3>
          <span className="task-index">Task {task.index}</span>
          {name ?? <span className="muted">unnamed</span>}
        </h3>
      )}
      <dl className="spec-facts">
        <div>
          <dt>Command</dt>
          <dd>
            <pre className="spec-code">{task.run ?? '—'}</pre>
          </dd>
        </div>
        {task.setup && (
          <div>
            <dt>Setup</dt>
            <dd>
              <pre className="spec-code">{task.setup}</pre>
            </dd>
          </div>
        )}
        <div>
          <dt>Resources</dt>
          <dd>{resourcesText(task)}</dd>
        </div>
        <div>
          <dt>Workdir</dt>
          <dd className="mono">{task.workdir ?? <span className="muted">the job&apos;s own folder</span>}</dd>
        </div>
        {(task.maxRestarts > 0 || task.recoverOnExitCodes.length > 0) && (
          <div>
            <dt>On failure</dt>
            <dd>
              restart up to {task.maxRestarts}×{task.recoverOnExitCodes.length ? ` · recover on exit ${task.recoverOnExitCodes.join(', ')}` : ''}
            </dd>
          </div>
        )}
        <Envs envs={task.envs} label="Envs (after launch overrides)" />
      </dl>
    </section>
  );
}

/** The Spec tab's content. */
export function SpecPanel({ job }: { job: JobDetail }) {
  const launchEnvs = Object.keys(job.launch.envs).length;
  return (
    <div className="card spec-panel" data-testid="spec-panel">
      <dl className="spec-facts">
        <div>
          <dt>Submitted from</dt>
          <dd data-testid="spec-origin">{ORIGIN_LABEL[job.origin]}</dd>
        </div>
        <div>
          <dt>Executor</dt>
          <dd>{job.executor}</dd>
        </div>
        {(job.launch.name !== null || launchEnvs > 0) && (
          <div data-testid="spec-launch">
            <dt>Given at launch (beside the YAML)</dt>
            <dd>
              {job.launch.name !== null && (
                <div>
                  name <span className="mono">{job.launch.name}</span>
                </div>
              )}
              {Object.keys(job.launch.envs)
                .sort()
                .map((k) => (
                  <div key={k} className="mono">
                    {k}={job.launch.envs[k]}
                  </div>
                ))}
            </dd>
          </div>
        )}
      </dl>
      {job.upload && (
        <details className="spec-upload" data-testid="spec-upload">
          <summary>
            Uploaded folder (the relative workdir): {job.upload.entries} entr{job.upload.entries === 1 ? 'y' : 'ies'}, {job.upload.unpackedSize} bytes of files, {job.upload.size} bytes
            compressed{job.upload.hash && (
              <>
                {' '}
                · <span className="mono">{job.upload.hash.slice(0, 12)}</span>
              </>
            )}
          </summary>
          <ul className="spec-upload-files mono">
            {job.upload.files.map((f) => (
              <li key={f}>{f}</li>
            ))}
            {job.upload.entries > job.upload.files.length && <li>… and {job.upload.entries - job.upload.files.length} more</li>}
          </ul>
        </details>
      )}
      {job.warnings?.length > 0 && (
        <div className="alert alert-warning" data-testid="spec-warnings">
          <strong>Accepted, not acted on</strong> (what jobdeck does instead):
          <ul>
            {job.warnings.map((w, i) => (
              <li key={i}>
                <span className="mono">
                  {w.line != null ? `line ${w.line} ` : ''}
                  {w.path}
                </span>
                : {w.message}
              </li>
            ))}
          </ul>
        </div>
      )}
      {job.tasks.map((t) => (
        <TaskSummary key={t.index} job={job} task={t} />
      ))}
      <h3 className="spec-yaml-title">YAML as submitted</h3>
      <pre className="spec-yaml" data-testid="spec-yaml" tabIndex={0} aria-label="The job YAML as submitted, secrets masked">
        {job.specYaml}
      </pre>
    </div>
  );
}
