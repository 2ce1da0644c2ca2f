// The Node log search's matcher (lib/logs/grep.ts, docs/design.md §14 "Log search"), in a worker
// thread: a user's regular expression runs here, never on the server's event loop, and the
// server ends the thread when the search's time is up or its client goes away — a pattern that
// backtracks for ever (`(a+)+$`) costs this thread its time limit, nothing more.
//
// workerData: { pattern, regex, ignoreCase, maxText }. Messages in: { bytes: Uint8Array, end }
// — the next piece of the current log, in order; `end` 'yes' marks its last piece, 'discard' a
// log that could not be read to its end (its unfinished line is dropped); either way the next
// message starts another log. Each message is answered by { matches: [{ line, text, cut }] } (line
// 1-based in that log; text cut at maxText characters), or { error } once.
import { parentPort, workerData } from 'node:worker_threads';

const { pattern, regex, ignoreCase, maxText } = workerData;
let test;
try {
  const re = regex ? new RegExp(pattern, ignoreCase ? 'iu' : 'u') : null;
  const needle = ignoreCase ? pattern.toLowerCase() : pattern;
  test = re ? (line) => re.test(line) : (line) => (ignoreCase ? line.toLowerCase() : line).includes(needle);
} catch (err) {
  test = null;
  parentPort.on('message', () => parentPort.postMessage({ error: String(err?.message ?? err) }));
}

let decoder = new TextDecoder('utf-8');
let carry = '';
let line = 0;

const cut = (s) => (s.length > maxText ? { text: s.slice(0, maxText), cut: true } : { text: s, cut: false });

if (test) {
  parentPort.on('message', ({ bytes, end }) => {
    const matches = [];
    const text = carry + decoder.decode(bytes, { stream: end === 'no' });
    let start = 0;
    let nl;
    while ((nl = text.indexOf('\n', start)) >= 0) {
      line++;
      const l = text.slice(start, nl);
      if (test(l)) matches.push({ line, ...cut(l.replace(/\r$/, '')) });
      start = nl + 1;
    }
    carry = text.slice(start);
    if (end !== 'no') {
      if (carry && end === 'yes') {
        line++;
        if (test(carry)) matches.push({ line, ...cut(carry) });
      }
      decoder = new TextDecoder('utf-8');
      carry = '';
      line = 0;
    }
    parentPort.postMessage({ matches });
  });
}
