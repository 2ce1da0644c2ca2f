import { existsSync } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { OsAccount } from '../../accounts';
import { accountTools, freshOwnFolder, handOver, passable } from '../hand-over';
import type { LaunchRequest } from '../types';
import { ACCOUNT_LANG, ACCOUNT_PATH, attemptEnv, envFileText, LOCAL_NODE_IP, workspaceOf } from '../wrapper';

/**
 * A local attempt that runs as an OS account of its own (docs/design.md §16 "Isolation"): what
 * the attempt folder holds for it, and the enter step's account part — the one privileged step.
 *
 * The wrapper stays jobdeck's (root's): it opens the log, waits for the phases and writes the
 * exit record, none of which the job can touch. Each phase starts through the enter step
 * (lib/executors/local/enter.ts), which joins the attempt's control groups and then, when the
 * folder names an account, drops to it:
 *
 *     setpriv --reuid=UID --regid=GID --init-groups -- env -i BASH -p -c LOADER …
 *
 * setpriv (util-linux) sets the real, effective and saved uid and gid and the account's
 * supplementary groups (initgroups) — three system calls, no PAM session, nothing to configure;
 * a root process that sets a non-zero uid loses its capabilities. env -i empties the
 * environment; the loader, running as the account, exports the job's environment from the `env`
 * file (opened by the enter step with jobdeck's rights and handed over as fd 3, so the file
 * itself stays unreadable to the job), enters the workdir with the account's own rights (a
 * folder the account may not reach is refused: the wrapper's `cd` as root would have let it in),
 * and execs the phase. The job's environment never passes through a root process: a task's
 * LD_PRELOAD or PATH reaches only the account's own programs.
 *
 * The folder's modes (jobdeck is root, the account has no rights but these):
 * - the attempt folder and its parents up to the data folder: 0711 — the account may pass
 *   through to its workspace, not list or open anything else;
 * - `wrapper.sh`, `enter.sh`, `env`, `account`, `handle.json`, the exit record: jobdeck's, 0600/0700;
 * - the log: jobdeck's, 0600 — the wrapper opens it and hands it to the phases as stdout and stderr;
 * - `setup.sh`, `run.sh`: jobdeck's, group the account's primary group, 0640 — read, not written;
 * - `work/` (the workspace, the default workdir): the account's, 0700, made fresh by jobdeck
 *   (with the uploaded folder in it) and handed over whole before the first phase starts.
 */

/** The file naming the account: its uid, gid, setpriv's and env's paths, one a line. */
export const ACCOUNT_FILE = 'account';
/** The job's environment: NUL-separated `NAME=value` records (wrapper.ts envFileText), 0600. */
export const ENV_FILE = 'env';

// The enter step's account part (bash, inside enter.sh's text: no dollar-brace here). The loader
// is a separate bash started as the account; its text is one argument (a constant: no input of
// the job's is ever in it).
const LOADER = String.raw`__jobdeck_wd=$1; shift
while IFS= read -r -d '' __jobdeck_kv; do export "$__jobdeck_kv" 2>/dev/null; done <&3
exec 3<&-
if ! cd -P -- "$__jobdeck_wd" 2>/dev/null; then
  printf 'jobdeck: workdir %s is not an accessible directory for the account %s; not started\n' "$__jobdeck_wd" "$LOGNAME" >&2
  exit 1
fi
unset __jobdeck_wd __jobdeck_kv
exec "$@"`;

/** The enter step's account part (see the module comment); ends in the phase's exec either way. */
export const ACCOUNT_STEP = String.raw`# (b) Drop to the job's OS account with a clean environment (lib/executors/local/account.ts).
if [ -f "$__jobdeck_dir/account" ]; then
  if ! { IFS= read -r __jobdeck_uid && IFS= read -r __jobdeck_gid && IFS= read -r __jobdeck_setpriv && IFS= read -r __jobdeck_envi; } <"$__jobdeck_dir/account" || ! exec 3<"$__jobdeck_dir/env"; then
    printf 'jobdeck: cannot read the attempt'"'"'s account or environment; not started\n' >&2
    exit 126
  fi
  exec "$__jobdeck_setpriv" --reuid="$__jobdeck_uid" --regid="$__jobdeck_gid" --init-groups -- "$__jobdeck_envi" -i "$BASH" -p -c '` + LOADER.replaceAll("'", `'"'"'`) + String.raw`' jobdeck-enter "$PWD" "$@"
fi
exec "$@"`;

/** The workspace `<attemptDir>/work`, the account's: made fresh when needed, then handed over whole. */
async function workspaceFor(attemptDir: string, account: OsAccount): Promise<void> {
  const work = workspaceOf(attemptDir);
  await freshOwnFolder(work);
  await handOver(work, account.uid, account.gid);
}

/**
 * Prepares the attempt folder of an attempt that runs as `req.account` (the folder and its
 * scripts already written, as root): modes (see the module comment), the env and account files,
 * the workspace handed over.
 * @returns the wrapper's own environment: a plain PATH and LANG, nothing of the job's.
 * @throws Error when setpriv or env is missing, or a mode or owner cannot be set.
 */
export async function prepareAccount(req: LaunchRequest & { account: OsAccount }, attemptDir: string, logPath: string): Promise<Record<string, string>> {
  const t = accountTools();
  if (!t) throw new Error('local executor: setpriv (util-linux) or env is missing, so an attempt cannot start as its account');
  const { uid, gid } = req.account;
  await passable(attemptDir);
  await fsp.chmod(logPath, 0o600);
  for (const f of ['setup.sh', 'run.sh']) {
    const p = path.join(attemptDir, f);
    if (!existsSync(p)) continue;
    await fsp.chown(p, 0, gid);
    await fsp.chmod(p, 0o640);
  }
  await fsp.writeFile(path.join(attemptDir, ENV_FILE), envFileText(attemptEnv(req, 'local', LOCAL_NODE_IP)), { mode: 0o600 });
  await fsp.writeFile(path.join(attemptDir, ACCOUNT_FILE), `${uid}\n${gid}\n${t.setpriv}\n${t.env}\n`, { mode: 0o600 });
  await workspaceFor(attemptDir, req.account);
  return { PATH: ACCOUNT_PATH, LANG: ACCOUNT_LANG };
}
