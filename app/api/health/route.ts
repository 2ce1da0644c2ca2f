import { apiRoute } from '@/lib/api/handler';
import { health } from '@/lib/api/health';

export const dynamic = 'force-dynamic';

/** GET /api/health → { ok, database, migrations, version }; 503 when the database fails. No token needed. */
export const GET = apiRoute(
  async () => {
    const h = await health();
    return Response.json(h, { status: h.ok ? 200 : 503 });
  },
  { public: true },
);
