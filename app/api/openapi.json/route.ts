import { openApiDocument } from '@/lib/api/openapi';
import { route } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/** GET /api/openapi.json — the OpenAPI 3.1 document, generated from lib/api/schemas.ts. */
export const GET = route(async () => Response.json(openApiDocument()));
