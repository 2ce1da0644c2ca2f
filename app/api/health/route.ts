import { health } from '@/lib/api/health';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/health → { ok, database, migrations, version }; 503 when the database fails. No token needed. */
export const GET = route(
  async () => {
    const h = await health(() => services().db);
    return Response.json(h, { status: h.ok ? 200 : 503 });
  },
  { public: true },
);
