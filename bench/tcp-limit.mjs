// The machine's loopback TCP limit for a Node.js sender and receiver, with no WebSocket framing,
// no file reads and no jobdeck code: the ceiling under any log stream a Node server can give one
// client. Sends `total` bytes (default 2,000,000,000) of one preallocated buffer in `chunk`-byte
// writes (default 256 KiB, jobdeck's frame size) over 127.0.0.1 and prints bytes/s.
//
//   node bench/tcp-limit.mjs [chunkBytes] [totalBytes]
import net from 'node:net';

const chunk = Buffer.alloc(Number(process.argv[2] || 262_144), 97);
const total = Number(process.argv[3] || 2_000_000_000);

const server = net.createServer((socket) => {
  let sent = 0;
  const pump = () => {
    while (sent < total) {
      sent += chunk.length;
      if (!socket.write(chunk)) return void socket.once('drain', pump);
    }
    socket.end();
  };
  pump();
});
server.listen(0, '127.0.0.1', () => {
  const t0 = process.hrtime.bigint();
  let got = 0;
  const client = net.connect(server.address().port, '127.0.0.1');
  client.on('data', (d) => (got += d.length));
  client.on('end', () => {
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    console.log(`loopback TCP, Node → Node, ${chunk.length}-byte writes: ${(got / s / 1e6).toFixed(0)} MB/s (${got} bytes in ${s.toFixed(2)} s)`);
    server.close();
  });
});
