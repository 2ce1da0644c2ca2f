import { upload } from '@/lib/api/jobs';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * POST /api/uploads — body: a gzip'd tar of a task's folder (application/gzip) → 201 the upload's
 * manifest `{ hash, size, unpackedSize, entries, files }`; a submit of the same user names `hash`
 * as `workdirUpload`. Stored once per content hash (docs/spec.md "workdir").
 */
export const POST = route(async (req, _params, { bodyLimit, actor }) => Response.json(await upload(services().store, req, bodyLimit, actor ?? undefined), { status: 201, headers: { 'cache-control': 'no-store' } }));
