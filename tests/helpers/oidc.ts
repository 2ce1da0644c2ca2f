import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

/** A test account of the provider: its password and its `groups` claim. */
export interface OidcAccount {
  password: string;
  groups: string[];
}

/** A client registered at the provider. */
export interface OidcClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

/** A running provider process (tests/helpers/oidc-provider.mjs). */
export interface OidcProvider {
  /** The issuer its metadata names. */
  issuer: string;
  /** Where it listens (`http://127.0.0.1:<port>`). */
  url: string;
  proc: ChildProcess;
  /**
   * What its token endpoint answers from the next code exchange on: the ID token with a foreign
   * `aud` or `iss` signed again with its own key, signed again unchanged (`resign`), or as issued
   * (`off`) — tests/helpers/oidc-provider.mjs.
   */
  forgeIdToken(mode: 'aud' | 'iss' | 'resign' | 'off'): Promise<void>;
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (so jobdeck's redirect URI is known before jobdeck starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts a real OpenID Connect provider (the oidc-provider package) in its own node process and
 * waits for its ready line. `issuerHost`: the host its issuer names (default 127.0.0.1).
 * @throws when it exits or is not ready in 30 s (its output in the message).
 */
export function startOidcProvider(opts: { clients: OidcClient[]; accounts: Record<string, OidcAccount>; issuerHost?: string }): Promise<OidcProvider> {
  const proc = spawn(process.execPath, [path.join(__dirname, 'oidc-provider.mjs')], {
    env: { ...process.env, OIDC_CLIENTS: JSON.stringify(opts.clients), OIDC_ACCOUNTS: JSON.stringify(opts.accounts), OIDC_ISSUER_HOST: opts.issuerHost ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the OIDC provider did not start:\n${out}`)), 30_000);
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the OIDC provider exited (${code}):\n${out}`));
    });
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"issuer"'));
      if (!line) return;
      clearTimeout(timer);
      const { issuer, url } = JSON.parse(line) as { issuer: string; url: string };
      resolve({
        issuer,
        url,
        proc,
        forgeIdToken: async (mode) => {
          const res = await fetch(`${url}/test/id-token?mode=${mode}`, { method: 'POST' });
          if (res.status !== 204) throw new Error(`the provider refused mode ${mode}: ${res.status} ${await res.text()}`);
        },
        stop: () =>
          new Promise<void>((done) => {
            if (proc.exitCode !== null) return done();
            proc.removeAllListeners('exit');
            proc.once('exit', () => done());
            proc.kill('SIGTERM');
          }),
      });
    });
  });
}

/** A minimal cookie jar over fetch with manual redirects (each host's cookies by name). */
export class CookieJar {
  private readonly jars = new Map<string, Map<string, string>>();

  /** Stores the Set-Cookie headers of a response from `url` (Max-Age=0 deletes). */
  take(url: string, res: Response): void {
    const host = new URL(url).host;
    const jar = this.jars.get(host) ?? new Map<string, string>();
    this.jars.set(host, jar);
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      if (attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) jar.delete(name);
      else jar.set(name, pair.slice(eq + 1).trim());
    }
  }

  /** The Cookie header for `url`'s host. */
  header(url: string): string {
    return [...(this.jars.get(new URL(url).host) ?? new Map<string, string>())].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  /** fetch with this jar, no automatic redirects. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: this.header(url) } });
    this.take(url, res);
    return res;
  }
}

/**
 * Follows redirects from `url` with the jar until a response is not a redirect, or its location
 * starts with `stopAt` (returned unfollowed). Answers the last response and its URL.
 */
export async function follow(jar: CookieJar, url: string, stopAt?: string): Promise<{ res: Response; url: string }> {
  let current = url;
  for (let i = 0; i < 20; i++) {
    const res = await jar.fetch(current);
    const loc = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !loc) return { res, url: current };
    const nextUrl = new URL(loc, current).href;
    if (stopAt && nextUrl.startsWith(stopAt)) return { res, url: nextUrl };
    await res.arrayBuffer();
    current = nextUrl;
  }
  throw new Error(`too many redirects from ${url}`);
}
