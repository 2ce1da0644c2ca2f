/**
 * What the viewer may do, as the dashboard asks it: by the rows of the server's authorization
 * table (lib/auth/rules.ts) that GET /api/users/me answers as `may` — never a copy of the rules
 * (docs/design.md §15). A control is shown when the row behind it is there; a page when the row of
 * the API it is made of is there (lib/ui/pages.ts). Browser-safe, pure.
 */
import type { UserMe } from '../api/types';

/**
 * True when the viewer may call the table row `rule` (`"POST /api/jobs/[id]/cancel"`). For a row
 * whose reach is `own` (a member's change to a job, anyone's own tokens), pass the `owner` of the
 * job or token (the user's name, null when none is recorded): only its own passes — the job
 * list and detail name the submitter by name, and names are unique. Without `owner` the answer
 * is whether the viewer may use the row at all. No viewer (not signed in): false.
 */
export function may(me: UserMe | null | undefined, rule: string, owner?: string | null): boolean {
  const reach = me?.may[rule];
  if (!reach) return false;
  if (reach === 'any' || owner === undefined) return true;
  return owner !== null && owner === me.name;
}

/** What the viewer may do to one job (by its submitter's name), each by its table row. */
export interface JobPermissions {
  cancel: boolean;
  rerun: boolean;
  remove: boolean;
  priority: boolean;
}

/** The viewer's rows for one job whose submitter is `owner` (JobSummary.owner). */
export function jobPermissions(me: UserMe | null | undefined, owner: string | null): JobPermissions {
  return {
    cancel: may(me, 'POST /api/jobs/[id]/cancel', owner),
    rerun: may(me, 'POST /api/jobs/[id]/rerun', owner),
    remove: may(me, 'DELETE /api/jobs/[id]', owner),
    priority: may(me, 'PATCH /api/jobs/[id]', owner),
  };
}

/** True when the viewer may do anything to the job (select it for the selection's actions). */
export function mayChangeAny(p: JobPermissions): boolean {
  return p.cancel || p.rerun || p.remove;
}

/** The viewer's reach on the table row `rule`: `any`, `own` (only its own jobs or tokens), or null — refused. */
export function reachOf(me: UserMe | null | undefined, rule: string): 'any' | 'own' | null {
  return me?.may[rule] ?? null;
}
