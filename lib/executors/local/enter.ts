import { ACCOUNT_STEP } from './account';

/**
 * The enter step (docs/design.md §7 "The enter step"): the one door through which a local
 * attempt's setup and run start. The wrapper (lib/executors/wrapper.ts) runs as jobdeck's own
 * account, outside the attempt's control group, and starts each phase as
 *
 *     "$__jobdeck_enter" "$__jobdeck_dir" -- "$BASH" -- "$__jobdeck_dir/setup.sh"
 *
 * The enter program then, in this order:
 *   (a) joins the attempt's control groups — the folders listed one a line in
 *       `<attempt dir>/cgroup` (lib/executors/local/cgroup.ts), each by writing its own pid to
 *       their `cgroup.procs`; a folder it cannot join stops the phase (exit 126, said in the
 *       log): never a silent run without the limits;
 *   (b) when the folder names an OS account (`account`), drops to it with a clean environment:
 *       setpriv sets uid, gid and supplementary groups, and a small loader running as the
 *       account takes the job's environment from the `env` file, enters the workdir with the
 *       account's rights and execs the program (lib/executors/local/account.ts ACCOUNT_STEP,
 *       docs/design.md §16). After (a): joining needs jobdeck's rights;
 *   then execs the program (its pid is the one that joined: every process it starts is in the
 *   group) — as the account, or, without one, as jobdeck with the wrapper's environment.
 *
 * It is generated text (like the wrapper), written to `<attempt dir>/enter.sh` at launch with the
 * absolute bash path in its first line. The wrapper reads it (`.`) in a subshell of its own — a
 * fork of the wrapper, so the pid that joins is `$BASHPID`, never `$$` (the wrapper's) — which
 * spares a bash start per phase against starting it as a program, as it still can be. Either way
 * it runs in a `bash -p` (the wrapper is one), so the task's BASH_ENV, exported functions and
 * SHELLOPTS do not affect it; it calls no external
 * command but setpriv and env, by absolute path (the task's envs may change PATH): read and printf
 * are builtins. The attempt folder stays unwritable by the job's account (0700, or 0711 with an
 * account: jobdeck's): the enter program and its `cgroup`, `account` and `env` files are read from
 * there with jobdeck's rights.
 */

/** The enter program's file in the attempt folder. */
export const ENTER_FILE = 'enter.sh';

/** The enter program for bash at `bash` (an absolute path). Static text but for that line: the attempt's inputs come as arguments. */
export function enterProgram(bash: string): string {
  return `#!${bash} -p
# jobdeck enter step (generated; do not edit): ATTEMPT_DIR -- PROGRAM ARGS...
__jobdeck_dir=$1
shift
[ "$1" = -- ] && shift
# (a) Join the attempt's control groups.
if [ -f "$__jobdeck_dir/cgroup" ]; then
  while IFS= read -r __jobdeck_cg; do
    [ -n "$__jobdeck_cg" ] || continue
    if ! printf '%d\\n' "$BASHPID" 2>/dev/null >"$__jobdeck_cg/cgroup.procs"; then
      printf 'jobdeck: cannot join the attempt'"'"'s control group %s; not started\\n' "$__jobdeck_cg" >&2
      exit 126
    fi
  done <"$__jobdeck_dir/cgroup"
fi
${ACCOUNT_STEP}
`;
}
