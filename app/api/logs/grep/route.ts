import { grepResponse, parseGrepQuery } from '@/lib/api/grep';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * GET /api/logs/grep?pattern=…&[regex=1]&[ignoreCase=1]&[limit=]&[jobs=]&[timeoutMs=] and the
 * list's filter (status, q, queue, submittedAfter, submittedBefore, metadata, owner: as GET
 * /api/jobs) — matching log lines of the filter's newest jobs, streamed as NDJSON
 * (lib/api/grep.ts). 400 names a bad field.
 */
export const GET = route(async (req, _params, { actor }) => grepResponse(services().store, parseGrepQuery(new URL(req.url)), req.signal, actor ?? undefined));
