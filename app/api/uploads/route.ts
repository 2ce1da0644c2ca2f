import { upload } from '@/lib/api/jobs';
import { route } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * POST /api/uploads — body: a gzip'd tar of a task's folder (application/gzip) → 201 the upload's
 * manifest `{ hash, size, unpackedSize, entries, files }`; a submit names `hash` as
 * `workdirUpload`. Stored once per content hash (docs/spec.md "workdir").
 */
export const POST = route(async (req) => Response.json(await upload(req), { status: 201, headers: { 'cache-control': 'no-store' } }));
