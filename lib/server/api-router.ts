import { readdirSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { attachBufferedBody, MAX_BODY_BYTES } from '../api/body';
import { ApiError, problem } from '../api/errors';
import { PEER_HEADER } from '../api/handler';
import { closeGracefully, LINGER_BYTES, LINGER_MS } from '../auth/gate';
import { logger } from '../log';
import { BUNDLED_API_ROUTES } from './api-routes-bundled';

/**
 * The custom server's own dispatcher for `/api/…`: it serves the App Router route handlers of
 * `app/api/**\/route.ts` (the same modules, the same `apiRoute()`-wrapped functions, Web
 * `Request` in, `Response` out) without going through Next.js's request pipeline. Next's
 * routing, rewrites, async contexts and app-route runtime cost ~3 ms of the server's only event
 * loop per API request (bench/README.md, fixes table). Pages stay with Next.
 *
 * Routes are found on disk the way Next finds them: every `route.ts` under `app/api`, its folder
 * path the URL, `[name]` a dynamic segment (decoded like Next), route groups `(x)` dropped. The
 * methods are the module's exported GET/POST/PUT/PATCH/DELETE functions; HEAD runs GET without
 * the body and OPTIONS answers 204 with `Allow` (Next's defaults); another method gets 405 with
 * `Allow`, an unknown `/api/…` path 404 — both as problem+json. Authentication, Host/Origin
 * checks and the body cap stay where they are: the server's gate before this, `apiRoute()`
 * inside every handler.
 */

/** An App Router handler as apiRoute() returns it. */
type RouteHandler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** One route: its URL pattern split in segments (`null` = dynamic, with its name) and handlers. */
interface ApiRoute {
  /** `/api/jobs/[id]/cancel` — for messages and tests. */
  pattern: string;
  segments: Array<{ literal: string } | { param: string }>;
  handlers: Partial<Record<(typeof METHODS)[number], RouteHandler>>;
}

/** The API routes of one app folder; match() + serve(). */
export interface ApiRouter {
  /** Patterns (`/api/jobs/[id]`) with their methods, in match order. */
  readonly routes: ReadonlyArray<{ pattern: string; methods: string[] }>;
  /**
   * Answers one request whose path starts with `/api/`: the handler's Response written to `res`
   * (streamed, with backpressure), or 404 / 405 problem+json. Never throws; a handler that
   * throws (apiRoute() normally catches everything) gives 500.
   */
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (/^route\.(ts|js|mjs)$/.test(e.name)) out.push(p);
  }
  return out;
}

/**
 * Loads every `route.ts` under `<appDir>/api` (imported in this process, from the sources under
 * tsx or compiled into the server's bundle; the handlers reach the server's services through
 * lib/server/services.ts services()).
 * @throws when a route module fails to import (a broken route must stop the start, not 500 later).
 */
export async function loadApiRouter(appDir: string): Promise<ApiRouter> {
  const apiDir = path.join(appDir, 'api');
  const routes: ApiRoute[] = [];
  // In the server's bundle the modules are compiled in (scripts/build-server.mjs); from the sources, on disk.
  const files = BUNDLED_API_ROUTES ? BUNDLED_API_ROUTES.map((r) => path.join(appDir, r.file)) : walk(apiDir).sort();
  for (const [i, file] of files.entries()) {
    const rel = path.relative(appDir, path.dirname(file)).split(path.sep);
    const segments = rel
      .filter((s) => !(s.startsWith('(') && s.endsWith(')')))
      .map((s) => {
        const m = /^\[([A-Za-z0-9_]+)\]$/.exec(s);
        if (m) return { param: m[1] };
        if (s.startsWith('[')) throw new Error(`${file}: catch-all segments (${s}) are not supported by the API router`);
        return { literal: s };
      });
    const mod = BUNDLED_API_ROUTES ? BUNDLED_API_ROUTES[i].mod : ((await import(pathToFileURL(file).href)) as Record<string, unknown>);
    const handlers: ApiRoute['handlers'] = {};
    for (const m of METHODS) if (typeof mod[m] === 'function') handlers[m] = mod[m] as RouteHandler;
    routes.push({ pattern: '/' + rel.join('/'), segments, handlers });
  }
  // Literal segments before dynamic ones (Next's precedence): /api/jobs/cancel before /api/jobs/[id].
  const rank = (r: ApiRoute) => r.segments.map((s) => ('literal' in s ? '0' : '1')).join('');
  routes.sort((a, b) => a.segments.length - b.segments.length || rank(a).localeCompare(rank(b)));

  const match = (pathname: string): { route: ApiRoute; params: Record<string, string> } | null => {
    const parts = pathname.split('/').slice(1);
    // A route that would have matched but for a segment that is not valid percent-encoding:
    // 400 (as Next answers), not 404.
    let bad: ApiError | null = null;
    outer: for (const route of routes) {
      if (route.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      for (let i = 0; i < parts.length; i++) {
        const seg = route.segments[i];
        if ('literal' in seg) {
          if (seg.literal !== parts[i]) continue outer;
        } else {
          if (parts[i] === '') continue outer;
          try {
            params[seg.param] = decodeURIComponent(parts[i]);
          } catch {
            bad = new ApiError(400, 'Bad Request', `path segment ${i + 1} of ${pathname} is not valid percent-encoding: "${parts[i]}"`);
            continue outer;
          }
        }
      }
      return { route, params };
    }
    if (bad) throw bad;
    return null;
  };

  return {
    routes: routes.map((r) => ({ pattern: r.pattern, methods: Object.keys(r.handlers) })),
    async serve(req, res) {
      try {
        await serveOne(req, res, match);
      } catch (err) {
        logger().error({ err, url: req.url, method: req.method }, 'request failed');
        if (!res.headersSent) await writeResponse(problem(new ApiError(500, 'Internal Server Error', 'the server failed to answer; see its log')), req, res, false);
        else res.destroy();
      }
    },
  };
}

async function serveOne(req: IncomingMessage, res: ServerResponse, match: (p: string) => { route: ApiRoute; params: Record<string, string> } | null): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase();
  const host = req.headers.host ?? 'localhost';
  const url = new URL(req.url ?? '/', `http://${host}`);
  let found: ReturnType<typeof match>;
  try {
    found = match(url.pathname);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    drain(req);
    return writeResponse(problem(err), req, res, false);
  }
  if (!found) {
    drain(req);
    return writeResponse(problem(new ApiError(404, 'Not Found', `no API endpoint at ${url.pathname}`)), req, res, false);
  }
  const { route, params } = found;
  const allow = [...Object.keys(route.handlers), ...(route.handlers.GET ? ['HEAD'] : []), 'OPTIONS'].join(', ');
  if (method === 'OPTIONS') {
    drain(req);
    res.writeHead(204, { allow });
    res.end();
    return;
  }
  const handler = route.handlers[(method === 'HEAD' ? 'GET' : method) as (typeof METHODS)[number]];
  if (!handler) {
    drain(req);
    const r = problem(new ApiError(405, 'Method Not Allowed', `${method} is not supported on ${route.pattern}; allowed: ${allow}`));
    r.headers.set('allow', allow);
    return writeResponse(r, req, res, false);
  }
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  // The client's address for the audit log, set here only (a client's own header is dropped).
  headers.delete(PEER_HEADER);
  if (req.socket.remoteAddress) headers.set(PEER_HEADER, req.socket.remoteAddress);
  // The handler's signal ends when the client goes away before the answer is complete.
  const aborter = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) aborter.abort();
  });
  const hasBody = method !== 'GET' && method !== 'HEAD';
  // A body of declared length within MAX_BODY_BYTES (every JSON/YAML submit) is read whole here,
  // from the socket: readBody()/limitRequestBody() take the bytes without two layers of Web
  // streams (~1 ms of CPU per submit). Others (chunked, larger: an upload) stream as Next would;
  // each route's own limit (lib/api/body-limits.ts) was checked by the gate and is by apiRoute().
  const declared = Number(req.headers['content-length']);
  const readFirst = hasBody && req.headers['content-length'] !== undefined && Number.isInteger(declared) && declared >= 0 && declared <= MAX_BODY_BYTES;
  const whole = readFirst ? await readWhole(req) : null;
  if (readFirst && whole === null) {
    // The client went away (or the body failed) before its end: nobody is left to answer.
    req.socket.destroy();
    return;
  }
  const stream = hasBody && !whole ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : null;
  const request = new Request(url, {
    method,
    headers,
    signal: aborter.signal,
    ...(whole ? { body: whole } : stream ? { body: stream, duplex: 'half' } : {}),
  } as RequestInit);
  if (whole) attachBufferedBody(request, whole);
  const response = await handler(request, { params: Promise.resolve(params) });
  const early = hasBody && !req.complete;
  await writeResponse(response, req, res, method === 'HEAD', early);
  if (early) void drainThenClose(stream, req);
}

/**
 * Ends a connection whose request body the handler did not read to its end (it answered early,
 * e.g. 413 part-way through a chunked upload): the rest must not be taken for a next request.
 * Closing at once would let the client's next write meet a reset, which can reach it before it
 * has read the answer (it sees EPIPE and no status). So the answer said `Connection: close`
 * (writeResponse with keepSocket), the socket's sending side ends (the answer is complete,
 * nothing follows), the rest of the upload is read and discarded, and the
 * socket is closed when the body ends — or cut past LINGER_BYTES / LINGER_MS, the same linger a
 * declared-too-large body gets at the gate.
 */
async function drainThenClose(body: ReadableStream<Uint8Array> | null, req: IncomingMessage): Promise<void> {
  const socket = req.socket;
  const cut = () => socket.destroy();
  const timer = setTimeout(cut, LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.end();
  if (!body || body.locked) return;
  const reader = body.getReader();
  let discarded = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      discarded += value.byteLength;
      if (discarded > LINGER_BYTES) break;
    }
  } catch {
    // The client went away: nothing left to drain.
  }
  cut();
}

/**
 * The whole body of `req` (its Content-Length was checked by the caller), or null when the
 * client went away or sent a different length before the end.
 */
function readWhole(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (v: Buffer | null) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onFail);
      req.off('close', onClose);
      resolve(v);
    };
    const onData = (c: Buffer) => {
      chunks.push(c);
      size += c.length;
    };
    const onEnd = () => done(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    const onFail = () => done(null);
    const onClose = () => {
      if (!req.complete) done(null);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onFail);
    req.on('close', onClose);
  });
}

/** Discards a request body nobody reads (so a kept-alive connection stays usable). */
function drain(req: IncomingMessage): void {
  if (!req.complete) req.resume();
}

/**
 * Writes a Web Response to a Node response: status, headers (each Set-Cookie separately), then
 * the body. A body of one chunk (every JSON answer) goes out with Content-Length in one write;
 * a longer one (a log download) chunk by chunk, waiting for 'drain' when the socket is full. A
 * client that goes away cancels the body (a streamed download stops reading its file).
 */
async function writeResponse(r: Response, req: IncomingMessage, res: ServerResponse, headOnly: boolean, keepSocket = false): Promise<void> {
  const out: Record<string, string | string[]> = {};
  r.headers.forEach((v, k) => {
    if (k !== 'set-cookie' && !(keepSocket && k === 'connection')) out[k] = v;
  });
  // keepSocket: the connection ends after this answer (drainThenClose), and the answer says so.
  if (keepSocket) closeGracefully(res);
  const cookies = r.headers.getSetCookie();
  if (cookies.length) out['set-cookie'] = cookies;
  if (!r.body || headOnly) {
    if (r.body) await r.body.cancel().catch(() => undefined);
    res.writeHead(r.status, out);
    res.end();
    return;
  }
  const reader = r.body.getReader();
  let gone = false;
  const onClose = () => {
    gone = true;
    void reader.cancel().catch(() => undefined);
  };
  res.once('close', onClose);
  try {
    const first = await reader.read();
    const second = first.done ? first : await reader.read();
    if (second.done) {
      const body = first.done ? undefined : first.value;
      out['content-length'] = String(body?.byteLength ?? 0);
      res.writeHead(r.status, out);
      res.end(body);
      return;
    }
    res.writeHead(r.status, out);
    let chunk: Uint8Array | undefined = first.value;
    let next: ReadableStreamReadResult<Uint8Array> = second;
    for (;;) {
      if (gone) return;
      if (chunk && !res.write(chunk)) {
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            resolve();
          };
          res.on('drain', go);
          res.on('close', go);
        });
      }
      if (next.done) break;
      chunk = next.value;
      next = await reader.read();
    }
    if (!gone) res.end();
  } catch (err) {
    // The body failed part-way (a file read error): the client sees a cut connection, not a
    // truncated answer that looks complete.
    logger().warn({ err: (err as Error).message, url: req.url }, 'response body failed part-way');
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('the answer failed\n');
    else res.destroy();
  } finally {
    res.off('close', onClose);
  }
}
