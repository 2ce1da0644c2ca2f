import { apiRoute } from '@/lib/api/handler';
import { openApiDocument } from '@/lib/api/openapi';

export const dynamic = 'force-dynamic';

/** GET /api/openapi.json — the OpenAPI 3.1 document, generated from lib/api/schemas.ts. */
export const GET = apiRoute(async () => Response.json(openApiDocument()));
