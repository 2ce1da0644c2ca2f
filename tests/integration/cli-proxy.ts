/**
 * A TCP proxy for the network-failure tests: forwards every connection to a real jobdeck server
 * (or PostgreSQL server) and cuts connections on command (`cutAll()`) or on a schedule (`every`),
 * the way a flaky network or a load balancer that drops idle/long connections does; `refuse(true)`
 * makes the server behind it look down (a restart) until `refuse(false)`. Cutting destroys both
 * sockets (RST-like from the client's point of view: the bytes in flight are lost).
 */
import net from 'node:net';

/** A running proxy. */
export interface Proxy {
  /** `http://127.0.0.1:PORT`, to give the CLI as `--url`. */
  url: string;
  /** Connections accepted so far. */
  connections(): number;
  /** Connections cut so far (by cutAll or the schedule). */
  cuts(): number;
  /** Destroys every open connection now. */
  cutAll(): void;
  /** While on, every open connection is cut and each new one is cut at once (the server looks down). */
  refuse(on: boolean): void;
  close(): Promise<void>;
}

/** Options of startProxy. */
export interface ProxyOptions {
  /** Cut every open connection each `every` ms (first cut after `phase` ms, default `every`). */
  every?: number;
  phase?: number;
  /**
   * Called for each chunk the server sends to a client: the connection number (from 1), the
   * chunk, and the first line of the last request the client sent on it (`GET /api/jobs/7
   * HTTP/1.1`). Answer 'cut' to drop the connection instead of forwarding the chunk, or
   * `{ forward: n }` to forward its first n bytes and then drop the connection (an answer cut
   * mid-way).
   */
  onServerData?(conn: number, chunk: Buffer, request: string): 'cut' | { forward: number } | void;
}

/** Starts a proxy to `target` (an http:// or postgresql:// URL: its host and port) on a free local port. */
export async function startProxy(target: string, opts: ProxyOptions = {}): Promise<Proxy> {
  const t = new URL(target);
  const open = new Set<{ a: net.Socket; b: net.Socket }>();
  let accepted = 0;
  let cut = 0;
  let refusing = false;
  const kill = (p: { a: net.Socket; b: net.Socket }) => {
    if (!open.delete(p)) return;
    cut++;
    p.a.resetAndDestroy();
    p.b.destroy();
  };
  const server = net.createServer((a) => {
    if (refusing) {
      cut++;
      a.on('error', () => undefined);
      a.resetAndDestroy();
      return;
    }
    const n = ++accepted;
    const b = net.connect(Number(t.port), t.hostname);
    const pair = { a, b };
    open.add(pair);
    const end = () => {
      open.delete(pair);
      a.destroy();
      b.destroy();
    };
    a.on('error', end);
    b.on('error', end);
    a.on('close', end);
    b.on('close', end);
    let request = '';
    let cutting = false;
    a.on('data', (d: Buffer) => {
      const m = /^(GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) [^\r\n]*/.exec(d.subarray(0, 2048).toString('latin1'));
      if (m) request = m[0];
      b.write(d);
    });
    b.on('data', (d: Buffer) => {
      if (cutting) return;
      const verdict = opts.onServerData?.(n, d, request);
      if (verdict === 'cut') kill(pair);
      else if (verdict && typeof verdict === 'object') {
        // Forward the part, let it reach the client, then drop the connection.
        cutting = true;
        a.write(d.subarray(0, verdict.forward), () => setTimeout(() => kill(pair), 20));
      } else a.write(d);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  let timer: NodeJS.Timeout | null = null;
  const cutAll = () => {
    for (const p of [...open]) kill(p);
  };
  if (opts.every) {
    const first = setTimeout(() => {
      cutAll();
      timer = setInterval(cutAll, opts.every);
    }, opts.phase ?? opts.every);
    timer = first;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => accepted,
    cuts: () => cut,
    cutAll,
    refuse(on) {
      refusing = on;
      if (on) cutAll();
    },
    close: async () => {
      if (timer) {
        clearTimeout(timer);
        clearInterval(timer);
      }
      cutAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
