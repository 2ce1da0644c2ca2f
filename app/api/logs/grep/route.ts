import { grepResponse, parseGrepQuery } from '@/lib/api/grep';
import { route, services } from '@/lib/server/route';

export const dynamic = 'force-dynamic';

/**
 * GET /api/logs/grep?pattern=…&[regex=1]&[ignoreCase=1]&[limit=]&[jobs=]&[timeoutMs=]&[status=…]&[q=]&[queue=]&[submittedAfter=]&[submittedBefore=]
 * — matching log lines of the filter's newest jobs, streamed as NDJSON (lib/api/grep.ts). 400 names a bad field.
 */
export const GET = route(async (req) => grepResponse(services().store, parseGrepQuery(new URL(req.url)), req.signal));
