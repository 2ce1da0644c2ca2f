/**
 * A real HTTP webhook receiver on 127.0.0.1 for the webhook tests: records every request
 * (headers, body) and answers as told — `ok` (204), a status (500, a 302 redirect), `hold`
 * (never answers), `big` (a 200 with a body of `bigBytes`, written as fast as the socket takes
 * it) — or refuses connections (`down`: the port is closed, then reopened on the same number).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got. */
export interface Received {
  id: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export type ReceiverMode = 'ok' | 'hold' | 'big' | { status: number; location?: string };

/** The receiver (see the module comment). */
export class Receiver {
  readonly got: Received[] = [];
  mode: ReceiverMode = 'ok';
  /** The answer to one request, by its arrival (0-based), when it should differ from `mode`. */
  answer?: (n: number, r: Received) => ReceiverMode | undefined;
  /** TCP connections accepted so far (keep-alive: fewer than the requests). */
  connections = 0;
  bigBytes = 50 * 1024 * 1024;
  /** Bytes the `big` answers managed to write before the client dropped the socket. */
  bigWritten = 0;
  private server: http.Server | null = null;
  private readonly sockets = new Set<import('node:net').Socket>();
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Listens (on the same port as before when it was up once). */
  async up(): Promise<this> {
    const server = http.createServer((req, res) => this.handle(req, res));
    server.on('connection', (s) => {
      this.sockets.add(s);
      this.connections++;
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Stops listening and drops every open connection: connects are refused from now on. */
  async down(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    for (const c of this.sockets) c.destroy();
    await new Promise<void>((r) => s.close(() => r()));
  }

  /** Requests whose signature verifies with `secret` (standardwebhooks' own Webhook.verify), as parsed bodies. */
  verified(secret: string): Array<{ id: string; payload: any }> {
    const wh = new Webhook(secret);
    return this.got.map((g) => ({ id: g.id, payload: wh.verify(g.body, g.headers as Record<string, string>) }));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const got: Received = { id: String(req.headers['webhook-id']), headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      this.got.push(got);
      const m = this.answer?.(this.got.length - 1, got) ?? this.mode;
      if (m === 'hold') return;
      if (m === 'ok') return void res.writeHead(204).end();
      if (m === 'big') return this.big(res);
      res.writeHead(m.status, m.location ? { location: m.location } : {}).end('refused by the test receiver');
    });
  }

  private big(res: http.ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(this.bigBytes) });
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let left = this.bigBytes;
    const pump = () => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        this.bigWritten += n;
        if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('close', () => (left = 0));
    pump();
  }
}
