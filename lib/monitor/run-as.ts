import { createHash, randomBytes } from 'node:crypto';
import { accountProblem, lookupAccount, type OsAccount } from '../accounts';
import type { Attempt, Job } from '../generated/prisma/client';
import { LaunchPrecheckError } from '../executors/wrapper';
import type { LaunchRequest } from '../executors/types';
import { runAsFor } from '../jobs/run-as';
import type { MonitorResources } from './resources';

/**
 * What an attempt is launched with besides its task (docs/design.md §16): the OS account it runs
 * as — the rule is lib/jobs/run-as.ts, applied with the submitter as it is at this launch, the
 * account looked up on the machine and checked (lib/accounts.ts) — and its own token, so it can
 * call jobdeck back with its submitter's rights (JOBDECK_URL, JOBDECK_TOKEN). A launch that no
 * account can take (refused, missing, root…) is a precheck failure: FAILED_PRECHECKS with the
 * reason, never a recovery loop.
 */

/** Characters of a token kept as its prefix (as personal tokens': lib/auth/guard.ts TOKEN_PREFIX_CHARS). */
const TOKEN_PREFIX_CHARS = 12;

/** The part of a LaunchRequest this module decides. */
export type RunAsPart = Pick<LaunchRequest, 'account' | 'api'>;

/**
 * The account and token of one attempt of `job` (see the module comment); `{}` when the monitor
 * has no run-as settings (tests of the monitor alone).
 * @throws LaunchPrecheckError when the attempt may not run (single-user jobdeck, an account that
 *   is missing, root, jobdeck's own or a system account).
 */
export async function runAsPart(res: MonitorResources, job: Pick<Job, 'id' | 'userId'>, taskIndex: number, attempt: Pick<Attempt, 'id' | 'number'>): Promise<RunAsPart> {
  const opts = res.runAs;
  if (!opts) return {};
  const user = job.userId === null ? null : await res.store.accounts.user(job.userId);
  const decision = runAsFor(opts.isolation, user);
  if (decision.as === 'refused') throw new LaunchPrecheckError(decision.why);
  let account: OsAccount | undefined;
  if (decision.as === 'account') {
    const whose = decision.own ? `user ${user?.name}'s OS account` : 'the run account (JOBDECK_RUN_ACCOUNT) of users without an OS account of their own';
    const found = await lookupAccount(decision.name);
    if (!found) throw new LaunchPrecheckError(`${whose}, ${decision.name}, does not exist on this machine${decision.own ? '' : ' (README, "Isolation": how to create it)'}`);
    const problem = accountProblem(found, { minUid: opts.isolation.minUid, serverUid: opts.isolation.serverUid });
    if (problem) throw new LaunchPrecheckError(`${whose} cannot run jobs: ${problem}`);
    account = found;
    await res.store.accounts.recordAccount(attempt.id, found.name);
  }
  const api = opts.api.url && job.userId !== null ? await attemptToken(res, job, taskIndex, attempt, opts.api.url) : null;
  return { ...(account ? { account } : {}), ...(api ? { api } : {}) };
}

/** A new token of the job's submitter for this attempt (lib/store createAttemptToken), or null. */
async function attemptToken(res: MonitorResources, job: Pick<Job, 'id' | 'userId'>, taskIndex: number, attempt: Pick<Attempt, 'id' | 'number'>, url: string): Promise<{ url: string; token: string } | null> {
  // A personal token's shape (`jdp_` + 32 random bytes), so the server authenticates it as one.
  const token = `jdp_${randomBytes(32).toString('base64url')}`;
  const row = await res.store.accounts.attemptToken({
    jobId: job.id,
    attemptId: attempt.id,
    userId: job.userId!,
    name: `job ${job.id} task ${taskIndex} attempt ${attempt.number}`,
    prefix: token.slice(0, TOKEN_PREFIX_CHARS),
    hash: createHash('sha256').update(token, 'utf8').digest('hex'),
  });
  return row ? { url, token } : null;
}
