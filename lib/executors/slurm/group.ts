import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readExitRecord, recordDirOf } from '../attempt-record';
import { freshOwnFolder, handOver, passable } from '../hand-over';
import { accountEnv, inheritedEnv } from '../wrapper';
import { ACTIVE_STATES, BATCH_FILE, firstLine, GROUP_MARK, jobIdOf, jobSteps, runSlurm, viewJob } from './cli';
import type { AttemptHandle, LaunchGroup, LaunchRequest } from '../types';

/**
 * A job group on Slurm (docs/slurm.md "Job groups"): the first attempts of a group's tasks run as
 * one **heterogeneous job**, one component per task, so Slurm starts them all at once or none
 * (its backfill scheduler places a heterogeneous job whole). Each task keeps what an attempt
 * means everywhere else — its own attempt folder, batch script, wrapper, log and exit record —
 * because the group's batch script (on component 0's node) runs each task's own single-node
 * batch script as a step of that task's component (`srun --het-group=C`). The handle of a task's
 * attempt names its component's own job id, so probe, cancel and the pending reason work per task.
 *
 * The monitor launches a group's tasks one by one (docs/design.md §17): the first to arrive
 * submits the heterogeneous job for every task (their shapes are in LaunchRequest.group) and
 * each task, the first too, *joins* it by leaving a join file with its batch script's arguments
 * in the group folder; the group's batch script starts a task's step as soon as its join file is
 * there, and gives back the components of tasks that have not joined within JOIN_WAIT_S (a
 * launch lost with jobdeck). It also writes each component's node address as
 * `JOBDECK_TASK_<NAME>_HOST` records (`run/hosts-env`), which every task's batch script puts over
 * its envs. When a task's step ends, its component (not component 0: it holds the group's batch
 * script) is given back to Slurm.
 *
 * A later attempt of a task (a restart or recovery while the group runs) is a one-component job
 * of its own, as any attempt: it reads the others' hosts from `run/hosts-env` and sets its own
 * host to the node it got; the others keep the address they started with.
 */

/** Seconds the group's batch script waits for every task to join before it gives their components back. */
export const JOIN_WAIT_S = 600;
/** The group folder's subfolder the group's job writes (its account's, with an OS account). */
export const GROUP_RUN_DIR = 'run';
/** Name, in the group's run folder, of the hosts file: NUL-separated `JOBDECK_TASK_<NAME>_HOST=addr` records. */
export const HOSTS_ENV_FILE = 'hosts-env';
/** The Slurm job id of the heterogeneous job (its component 0), written once sbatch answered. */
const LEADER_FILE = 'leader';
/** The components' own job ids, one per line, by task index. */
const IDS_FILE = 'ids';
/** The tasks' host env names, one per line, in component order (the group's batch script reads them). */
const TASKS_FILE = 'tasks';

// The group's batch script. Static text: inputs arrive as arguments and files of the group
// folder; never interpolated. `bash -p` as for an attempt (lib/executors/slurm/launch.ts). A join
// file holds, NUL-separated: the attempt's record folder, its log, the log as an --output
// pattern, its workdir, has-setup, has-run, CPUs, and the step's name.
// Component C's task joins as `join.C`; line C+1 of `tasks` is its host env name.
//   $1 group folder  $2 components  $3 seconds to wait for the joins
// (No dollar-brace in this text: it is a template literal.)
/** The batch script of a job group's heterogeneous job (bash; arguments above). */
export const GROUP_BATCH = String.raw`#!/bin/bash -p
# jobdeck Slurm batch script of a job group (generated; do not edit)
__jobdeck_g=$1 __jobdeck_n=$2 __jobdeck_wait=$3
__jobdeck_run=$__jobdeck_g/run
__jobdeck_mv=/bin/mv; [ -x "$__jobdeck_mv" ] || __jobdeck_mv=/usr/bin/mv
# Each component's node address (Slurm's NodeAddr, else what its name resolves to), as the
# record of the env var its task is found by.
: >"$__jobdeck_run/hosts-env.tmp"
__jobdeck_k=0
while IFS= read -r __jobdeck_var; do
  __jobdeck_node=$(scontrol show hostnames "$(printenv "SLURM_JOB_NODELIST_HET_GROUP_$__jobdeck_k")" 2>/dev/null | head -n 1)
  __jobdeck_addr=$(scontrol -o show node "$__jobdeck_node" 2>/dev/null | sed -n 's/.*[[:space:]]NodeAddr=\([^[:space:]]*\).*/\1/p')
  if ! [[ $__jobdeck_addr =~ ^[0-9.]+$|: ]]; then
    __jobdeck_addr=$(getent ahosts "$__jobdeck_node" 2>/dev/null | awk 'NR == 1 { print $1 }')
    [ -n "$__jobdeck_addr" ] || __jobdeck_addr=$__jobdeck_node
  fi
  printf '%s=%s\0' "$__jobdeck_var" "$__jobdeck_addr" >>"$__jobdeck_run/hosts-env.tmp"
  __jobdeck_k=$((__jobdeck_k + 1))
done <"$__jobdeck_g/tasks"
"$__jobdeck_mv" -f -- "$__jobdeck_run/hosts-env.tmp" "$__jobdeck_run/hosts-env"

__jobdeck_release() { # c: component c back to Slurm (never 0: it runs this script)
  [ "$1" = 0 ] || scancel "$(printenv "SLURM_JOB_ID_HET_GROUP_$1")" 2>/dev/null
}
__jobdeck_start() { # c: component c's task's own batch script as a step of it, then the component back
  local rec log out work setup run cpus name
  { IFS= read -r -d '' rec; IFS= read -r -d '' log; IFS= read -r -d '' out; IFS= read -r -d '' work
    IFS= read -r -d '' setup; IFS= read -r -d '' run; IFS= read -r -d '' cpus; IFS= read -r -d '' name; } <"$__jobdeck_g/join.$1"
  if [ ! -e "$rec/stop" ]; then
    srun --het-group="$1" --nodes=1 --ntasks=1 --cpus-per-task="$cpus" --quiet --input=none --mpi=none \
      --output="$out" --open-mode=append --export=ALL --job-name="$name" \
      "$BASH" -p -- "$rec/batch.sh" "$rec" "$log" "$work" "$setup" "$run" "$__jobdeck_run/hosts-env" ""
  fi
  __jobdeck_release "$1"
}

__jobdeck_started=' '
__jobdeck_end=$(($(date +%s) + __jobdeck_wait))
while :; do
  __jobdeck_left=
  for ((__jobdeck_k = 0; __jobdeck_k < __jobdeck_n; __jobdeck_k++)); do
    case $__jobdeck_started in *" $__jobdeck_k "*) continue ;; esac
    if [ -f "$__jobdeck_g/join.$__jobdeck_k" ]; then
      __jobdeck_start "$__jobdeck_k" &
      __jobdeck_started="$__jobdeck_started$__jobdeck_k "
    else
      __jobdeck_left="$__jobdeck_left $__jobdeck_k"
    fi
  done
  [ -z "$__jobdeck_left" ] && break
  if [ "$(date +%s)" -ge "$__jobdeck_end" ]; then
    echo "jobdeck: component(s)$__jobdeck_left of the group never joined its job; they are given back" >&2
    for __jobdeck_k in $__jobdeck_left; do __jobdeck_release "$__jobdeck_k"; done
    break
  fi
  sleep 0.2
done
wait
exit 0
`;

/** The hosts file a later attempt of a group's task reads (BATCH's $6), and its own host's env name ($7). */
export function groupHostArgs(req: LaunchRequest): [string, string] {
  const g = req.group;
  if (!g) return ['', ''];
  return [path.join(g.dir, GROUP_RUN_DIR, HOSTS_ENV_FILE), g.tasks[req.taskIndex]?.hostEnv ?? ''];
}

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** Writes `text` to `file` by a rename (a reader sees all of it or nothing). */
function writeAtomic(file: string, text: string, mode: number): void {
  writeFileSync(`${file}.tmp`, text, { mode });
  renameSync(`${file}.tmp`, file);
}

/** What a task's step needs (a join file's fields, in order: see GROUP_BATCH). */
export interface JoinArgs {
  recordDir: string;
  logPath: string;
  output: string;
  workdir: string;
  hasSetup: string;
  hasRun: string;
  cpus: string;
  stepName: string;
}

/**
 * The order of a group's tasks as the heterogeneous job's components (task indexes, component 0
 * first): the tasks without `max_duration` first, then the longest first. Component 0 runs the
 * group's batch script, whose end at its time limit ends the whole job: it gets the longest
 * limit, or none.
 */
export function componentOrder(tasks: LaunchGroup['tasks']): number[] {
  const limit = (i: number) => tasks[i].maxDurationMs ?? Number.POSITIVE_INFINITY;
  return tasks.map((_, i) => i).sort((a, b) => limit(b) - limit(a) || a - b);
}

/**
 * One component's request: one node, one Slurm task, its CPUs; its memory as `--mem-per-cpu`
 * (the task's per-node memory over its CPUs, rounded up: sbatch carries `--mem` over to the later
 * components, `--mem-per-cpu` not); its `--time` in whole minutes, rounded up — or, for a task
 * without `max_duration`, `noLimit` (what Slurm gives a job that asks for none, said explicitly:
 * sbatch carries `--time` over to the later components, and Slurm gives a started heterogeneous
 * job's components that have none the longest limit among them — both measured).
 */
export function componentArgs(t: LaunchGroup['tasks'][number], noLimit: string | null): string[] {
  const cpus = Math.max(1, Math.ceil(t.cpus));
  const out = ['--nodes=1', '--ntasks=1', `--cpus-per-task=${cpus}`];
  if (t.memoryBytes !== undefined) out.push(`--mem-per-cpu=${Math.max(1, Math.ceil(t.memoryBytes / (1024 * 1024) / cpus))}M`);
  if (t.maxDurationMs !== undefined) out.push(`--time=${Math.max(1, Math.ceil(t.maxDurationMs / 60_000))}`);
  else if (noLimit !== null) out.push(`--time=${noLimit}`);
  return out;
}

/**
 * The time limit Slurm gives a job that asks for none on `partition` (absent: the default
 * partition): its DefaultTime, else its MaxTime (`UNLIMITED`, `1-00:00:00`…); null when the
 * controller does not say.
 * @throws SlurmUnavailableError when scontrol does not answer.
 */
export async function partitionNoLimit(partition: string | undefined): Promise<string | null> {
  const r = await runSlurm('scontrol', ['-o', 'show', 'partition', ...(partition ? [partition] : [])], { timeoutMs: 30_000 });
  if (r.code !== 0) return null;
  const line = r.stdout.split('\n').find((l) => (partition ? l.startsWith(`PartitionName=${partition} `) : / Default=YES /.test(l)));
  if (!line) return null;
  const def = / DefaultTime=(\S+)/.exec(line)?.[1];
  const t = def && def !== 'NONE' ? def : / MaxTime=(\S+)/.exec(line)?.[1];
  return t && /^(?:UNLIMITED|INFINITE|[0-9]+(?:-[0-9]+)?(?::[0-9]+){0,2})$/.test(t) ? t : null;
}

/**
 * Submits the group's heterogeneous job (one component per task, in {@link componentOrder}), as
 * the attempt's account when it has one, and records its job ids.
 * @returns each task's component job id, by task index.
 * @throws Error when sbatch refuses it or the controller does not name its components.
 */
async function submitGroup(req: LaunchRequest, g: LaunchGroup, partition: string | undefined): Promise<string[]> {
  const run = path.join(g.dir, GROUP_RUN_DIR);
  const order = componentOrder(g.tasks);
  writeFileSync(path.join(g.dir, TASKS_FILE), order.map((k) => `${g.tasks[k].hostEnv}\n`).join(''), { mode: 0o644 });
  writeFileSync(path.join(g.dir, BATCH_FILE), GROUP_BATCH, { mode: 0o755 });
  await freshOwnFolder(run);
  if (req.account) await handOver(run, req.account.uid, req.account.gid);
  const common = [`--job-name=jobdeck-${req.jobId}-group`, `--output=${path.join(run, 'slurm.log').replaceAll('%', '%%')}`, '--open-mode=append', `--chdir=${run}`, '--no-requeue', '--export=ALL', ...(partition ? [`--partition=${partition}`] : [])];
  const noLimit = g.tasks.some((t) => t.maxDurationMs === undefined) ? await partitionNoLimit(partition) : null;
  const components = order.flatMap((k, c) => [...(c > 0 ? [':'] : []), ...common, ...componentArgs(g.tasks[k], noLimit)]);
  const args = ['--parsable', ...components, path.join(g.dir, BATCH_FILE), g.dir, String(g.tasks.length), String(JOIN_WAIT_S)];
  const env = req.account ? accountEnv(req.account) : inheritedEnv();
  const r = await runSlurm('sbatch', args, { timeoutMs: 60_000, env: env as NodeJS.ProcessEnv, cwd: run, ...(req.account ? { as: req.account } : {}) });
  const leader = /^(\d+)(?:;\S*)?$/.exec(r.stdout.trim())?.[1];
  if (r.code !== 0 || !leader) throw new Error(`Slurm executor: sbatch refused the job group's heterogeneous job: ${firstLine(r.stderr) || firstLine(r.stdout) || `exit code ${r.code}`}`);
  writeAtomic(path.join(g.dir, LEADER_FILE), `${leader}\n`, 0o644);
  // Each component is a job of its own (HetJobOffset c); its id is usually leader + c, but only the controller says.
  const show = await runSlurm('scontrol', ['-o', 'show', 'job', leader], { timeoutMs: 30_000 });
  const ids: string[] = [];
  for (const line of show.stdout.split('\n')) {
    const m = /(?:^|\s)JobId=(\d+)\s.*\sHetJobOffset=(\d+)/.exec(line);
    const k = m ? order[Number(m[2])] : undefined;
    if (m && k !== undefined) ids[k] = m[1];
  }
  if (ids.length !== g.tasks.length || order.some((k) => !ids[k])) throw new Error(`Slurm executor: the controller does not name the ${g.tasks.length} components of job ${leader} (scontrol: ${firstLine(show.stderr + show.stdout)})`);
  writeAtomic(path.join(g.dir, IDS_FILE), ids.map((x) => `${x}\n`).join(''), 0o644);
  return ids;
}

/**
 * Joins task `req.taskIndex`'s first attempt to its group's heterogeneous job — submitted here
 * when no earlier task's launch did — by its join file (`join.<component>`, see the module doc).
 * @returns its handle (`ref`: its component's job id), or null when the group's job no longer
 *   runs that component (it ended, or gave the component back): the attempt then runs as a job
 *   of its own.
 * @throws as submitGroup.
 */
export async function joinGroup(req: LaunchRequest, partition: string | undefined, attemptDir: string, a: JoinArgs): Promise<AttemptHandle | null> {
  const g = req.group!;
  const k = req.taskIndex;
  mkdirSync(g.dir, { recursive: true, mode: req.account ? 0o711 : 0o700 });
  if (req.account) await passable(g.dir);
  const join = path.join(g.dir, `join.${componentOrder(g.tasks).indexOf(k)}`);
  const text = [a.recordDir, a.logPath, a.output, a.workdir, a.hasSetup, a.hasRun, a.cpus, a.stepName].map((x) => `${x}\0`).join('');
  let ids = (readText(path.join(g.dir, IDS_FILE)) ?? '').split('\n').filter(Boolean);
  if (ids.length !== g.tasks.length) {
    // The first task to launch: its join file is there before the job can start.
    writeAtomic(join, text, 0o644);
    ids = await submitGroup(req, g, partition);
  } else {
    const view = await viewJob(ids[k], g.dir);
    if (view.kind !== 'known' || !ACTIVE_STATES.has(view.info.state)) return null;
    writeAtomic(join, text, 0o644);
  }
  writeFileSync(path.join(attemptDir, GROUP_MARK), `${g.dir}\n`, { mode: 0o644 });
  return { executor: 'slurm', ref: ids[k], pid: null, pidStartTime: null, attemptDir };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Stops one task of a group's heterogeneous job (its component `handle.ref`), leaving the others
 * running: the stop file keeps its step from starting; TERM to its step, KILL after `graceMs`;
 * done when the task recorded its end, its component ended, or no step of it is left after the
 * KILL. While the heterogeneous job is PENDING Slurm cancels only the whole job, which is then
 * what happens (the group's end rule stops the others anyway: a cancelled task ends the group).
 * @throws SlurmUnavailableError when the controller does not answer; Error when the task still
 *   runs 60 s after the KILL.
 */
export async function cancelGroupTask(handle: AttemptHandle, group: string, pollMs: number, graceMs: number, markStop: (dir: string) => void): Promise<void> {
  const id = jobIdOf(handle);
  if (id === null) return;
  const state = async (): Promise<string | null> => {
    const v = await viewJob(id, handle.attemptDir);
    return v.kind === 'known' && ACTIVE_STATES.has(v.info.state) ? v.info.state : null;
  };
  const first = await state();
  if (first === null) return;
  markStop(recordDirOf(handle.attemptDir));
  const scancel = (args: string[]) => runSlurm('scancel', args, { timeoutMs: 30_000 });
  if (first === 'PENDING') {
    const leader = (readText(path.join(group, LEADER_FILE)) ?? '').trim();
    await scancel([/^\d+$/.test(leader) ? leader : id]);
  }
  const termUntil = Date.now() + graceMs;
  let killedAt: number | null = null;
  const signalled = new Set<string>();
  for (;;) {
    if (readExitRecord(handle.attemptDir) || (await state()) === null) return;
    const steps = await jobSteps(id);
    if (killedAt !== null && steps.length === 0) return;
    if (killedAt === null && Date.now() >= termUntil) {
      killedAt = Date.now();
      signalled.clear();
    }
    // Each step once per signal (a step started meanwhile too); a step signal is not a job cancel (no KillWait).
    for (const step of steps) {
      if (signalled.has(step)) continue;
      signalled.add(step);
      await scancel([`--signal=${killedAt === null ? 'TERM' : 'KILL'}`, step]);
    }
    if (killedAt !== null && Date.now() - killedAt > 60_000) throw new Error(`Slurm executor: task step of job ${id} still runs 60 s after KILL`);
    await sleep(pollMs);
  }
}
