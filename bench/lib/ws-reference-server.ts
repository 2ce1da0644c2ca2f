/**
 * The transport's own limit, for the log-throughput measure: a bare Node + `ws` server that
 * sends one file as binary frames in the job stream's framing (16-byte log header + ≤ 256 KiB of
 * bytes, jobdeck's LOG_CHUNK_BYTES) with the same kind of backpressure (at most ~1 MiB unsent),
 * then a JSON `end` and close 1000 — no database, no auth, no protocol logic. Run as its own
 * process: `node --import tsx bench/lib/ws-reference-server.ts <file>`; prints
 * `listening <port>` on stdout and serves `/ws/jobs/1` until killed.
 */
import { open } from 'node:fs/promises';
import http from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { LOG_CHUNK_BYTES, LOG_HEADER_BYTES, writeLogHeader } from '../../lib/logs/protocol';

const file = process.argv[2];
if (!file) {
  console.error('usage: ws-reference-server.ts <file>');
  process.exit(2);
}
const HIGH_WATER = 1024 * 1024;

async function stream(ws: WebSocket): Promise<void> {
  const fh = await open(file, 'r');
  try {
    let offset = 0;
    let inflight = 0;
    let wake: (() => void) | null = null;
    for (;;) {
      while (inflight > HIGH_WATER) await new Promise<void>((r) => (wake = r));
      const buf = Buffer.allocUnsafe(LOG_HEADER_BYTES + LOG_CHUNK_BYTES);
      const { bytesRead } = await fh.read(buf, LOG_HEADER_BYTES, LOG_CHUNK_BYTES, offset);
      if (bytesRead === 0) break;
      writeLogHeader(buf, 0, 1, offset);
      offset += bytesRead;
      const frame = buf.subarray(0, LOG_HEADER_BYTES + bytesRead);
      inflight += frame.length;
      ws.send(frame, { binary: true }, () => {
        inflight -= frame.length;
        if (inflight <= HIGH_WATER && wake) {
          const w = wake;
          wake = null;
          w();
        }
      });
    }
    ws.send(JSON.stringify({ type: 'end', status: 'SUCCEEDED', follow: false }));
    ws.close(1000);
  } finally {
    await fh.close();
  }
}

const server = http.createServer((_req, res) => res.writeHead(404).end());
const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
server.on('upgrade', (req, socket, head) => {
  wss.handleUpgrade(req, socket, head, (ws) => {
    stream(ws).catch((err: Error) => ws.close(1011, err.message.slice(0, 100)));
  });
});
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  console.log(`listening ${typeof addr === 'object' && addr ? addr.port : 0}`);
});
process.on('SIGTERM', () => process.exit(0));
