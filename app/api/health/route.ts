import { DATABASE_RETRY_AFTER_S } from '@/lib/api/errors';
import { health } from '@/lib/api/health';
import type { Isolation } from '@/lib/config';
import type { LimitsStatus } from '@/lib/jobs/limits';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * GET /api/health → { ok, database, migrations, version, degraded?, limits?, isolation? } (isolation: as
 * whom jobs run, docs/design.md §16; degraded: the data
 * folder's disk is full; limits: how the local executor holds attempts to their resources);
 * 503 when the database fails. No token needed; without one, no path, database message or
 * limits are told.
 */
export const GET = route(
  async (_req, _params, { identity }) => {
    let home: string | undefined;
    let limits: { local: LimitsStatus } | undefined;
    let isolation: Isolation | undefined;
    try {
      home = services().config.home;
      isolation = services().isolation;
      const local = services().executors.get('local').limits?.();
      if (local) limits = { local };
    } catch {
      // no server in this process: health() answers the database's failure
    }
    const h = await health(() => services().db, home, { detail: identity !== null, ...(limits ? { limits } : {}), ...(isolation ? { isolation } : {}) });
    return Response.json(h, { status: h.ok ? 200 : 503, headers: h.ok ? {} : { 'retry-after': String(DATABASE_RETRY_AFTER_S) } });
  },
  { public: true },
);
