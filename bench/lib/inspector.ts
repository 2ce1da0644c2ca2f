/**
 * CPU profiles of a bench server over a chosen window (not its whole life): the server runs with
 * `--inspect=127.0.0.1:0` (loopback only) and the bench drives the V8 profiler through the
 * inspector protocol (Profiler.start / Profiler.stop) around the phase being measured.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';

/** A connection to a server's inspector. */
export interface Inspector {
  /** Starts sampling (interval µs, default 500). */
  start(intervalUs?: number): Promise<void>;
  /** Stops sampling and writes the profile to `file` (a .cpuprofile JSON). */
  stop(file: string): Promise<string>;
  close(): void;
}

/** The inspector URL a node process printed ("Debugger listening on ws://…"), or null. */
export function inspectorUrl(log: string): string | null {
  const m = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[0-9a-f-]+)/.exec(log);
  return m ? m[1] : null;
}

/** Connects to the inspector at `url`. */
export async function connectInspector(url: string): Promise<Inspector> {
  const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 1024 * 1024 * 1024 });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let nextId = 1;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  ws.on('message', (data: Buffer) => {
    const msg = JSON.parse(data.toString('utf8')) as { id?: number; result?: unknown; error?: { message: string } };
    if (msg.id === undefined) return;
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (msg.error) p.reject(new Error(msg.error.message));
    else p.resolve(msg.result);
  });
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, method, params }));
    });
  await call('Profiler.enable');
  return {
    start: async (intervalUs = 500) => {
      await call('Profiler.setSamplingInterval', { interval: intervalUs });
      await call('Profiler.start');
    },
    stop: async (file) => {
      const r = (await call('Profiler.stop')) as { profile: unknown };
      writeFileSync(file, JSON.stringify(r.profile));
      return path.resolve(file);
    },
    close: () => ws.close(),
  };
}
