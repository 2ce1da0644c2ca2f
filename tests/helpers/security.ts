import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import WebSocket from 'ws';
import { ROOT } from './server';

/**
 * Helpers for the security suites: the app's routes found on disk (so new routes are covered
 * without editing the tests), WebSocket upgrade attempts, cookies.
 */

/** One API route file: its URL (dynamic segments filled with a placeholder) and exported methods. */
export interface RouteFile {
  file: string;
  path: string;
  methods: string[];
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

function walk(dir: string, name: RegExp, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, name, out);
    else if (name.test(e.name)) out.push(p);
  }
  return out;
}

/** `app/api/jobs/[id]/logs` → `/api/jobs/999999/logs` (route groups dropped, params filled). */
function urlPath(dir: string): string {
  const segs = path
    .relative(path.join(ROOT, 'app'), dir)
    .split(path.sep)
    .filter((s) => s && !(s.startsWith('(') && s.endsWith(')')) && !s.startsWith('@'))
    .map((s) => (/^\[\[?\.\.\./.test(s) ? 'x' : s.startsWith('[') ? '999999' : s));
  return `/${segs.join('/')}`;
}

/** Every `route.ts` under app/api with the HTTP methods it exports. */
export function apiRouteFiles(): RouteFile[] {
  return walk(path.join(ROOT, 'app', 'api'), /^route\.(ts|tsx|js|mjs)$/).map((file) => {
    const src = readFileSync(file, 'utf8');
    const methods = new Set<string>();
    for (const m of src.matchAll(/export\s+(?:const|let|var|async\s+function|function)\s+([A-Z]+)\b/g)) if (METHODS.includes(m[1])) methods.add(m[1]);
    for (const m of src.matchAll(/export\s*\{([^}]*)\}/g)) {
      for (const part of m[1].split(',')) {
        const name = part.trim().split(/\s+as\s+/).pop()!.trim();
        if (METHODS.includes(name)) methods.add(name);
      }
    }
    return { file: path.relative(ROOT, file), path: urlPath(path.dirname(file)), methods: [...methods] };
  });
}

/** Every page under app/ (URL with params filled), except the login page. */
export function pagePaths(): string[] {
  return walk(path.join(ROOT, 'app'), /^page\.(tsx|ts|jsx|js)$/)
    .map((f) => urlPath(path.dirname(f)).replace(/^\/$/, '/'))
    .map((p) => (p === '' ? '/' : p))
    .filter((p) => p !== '/login');
}

/** What happened to a WebSocket upgrade attempt. */
export interface UpgradeOutcome {
  /** 101 when the socket opened, else the HTTP status the server refused with (-1: no answer). */
  status: number;
  body: string;
  ws?: WebSocket;
}

/** Tries a WebSocket upgrade with the given headers; resolves once the server decided. */
export function tryUpgrade(url: string, headers: Record<string, string> = {}): Promise<UpgradeOutcome> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (o: UpgradeOutcome) => {
      if (!done) {
        done = true;
        resolve(o);
      }
    };
    const ws = new WebSocket(url, { headers, handshakeTimeout: 10_000 });
    ws.on('open', () => finish({ status: 101, body: '', ws }));
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => finish({ status: res.statusCode ?? -1, body }));
      res.on('error', () => finish({ status: res.statusCode ?? -1, body }));
    });
    ws.on('error', (err) => setTimeout(() => finish({ status: -1, body: err.message }), 50));
  });
}

/** `name=value` of the first Set-Cookie of a response (for a Cookie header), or null. */
export function cookieFrom(res: Response): string | null {
  const c = res.headers.getSetCookie?.()[0];
  return c ? c.split(';')[0] : null;
}

/** ws:// URL of a server path. */
export function wsUrl(httpUrl: string, p: string): string {
  return new URL(p, httpUrl.replace(/^http/, 'ws')).toString();
}

/** A plain node:http request (fetch cannot set Host): status, headers and body text. */
export function httpRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: import('node:http').IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? -1, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}
