import { health } from '@/lib/api/health';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * GET /api/health → { ok, database, migrations, version, degraded? } (degraded: the data folder's
 * disk is full); 503 when the database fails. No token needed.
 */
export const GET = route(
  async () => {
    let home: string | undefined;
    try {
      home = services().config.home;
    } catch {
      // no server in this process: health() answers the database's failure
    }
    const h = await health(() => services().db, home);
    return Response.json(h, { status: h.ok ? 200 : 503 });
  },
  { public: true },
);
