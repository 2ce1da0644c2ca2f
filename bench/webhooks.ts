/**
 * Measure 8 — webhooks. 1,000 jobs (capacity check off) submitted through 16 clients; each
 * blocks on one named pipe (`cat <fifo>`); once all are RUNNING the bench opens and closes the
 * pipe's write end, so every job ends within about a second. A subscription to `job.succeeded`
 * points at a receiver in the bench process (node:http on 127.0.0.1, answering 204;
 * JOBDECK_WEBHOOK_ALLOW_PRIVATE=1). Reported: deliveries/s (1,000 ÷ first job end → last
 * delivery), the lag from each event (the payload's `timestamp`, the JobEvent's `at`) to its
 * arrival (p50 / p99), how long until all 1,000 were delivered, every delivery verified once and
 * in event order, how long the server took to write the job ends themselves and how long the
 * last delivery came after the last of them, the server's CPU time per delivery from the gate to
 * the last arrival beside the whole machine's busy share meanwhile (what a wall-clock span on a
 * loaded machine cannot separate: the server's own cost from the 1,000 exiting jobs'), and the
 * server's RSS (max while it sends; idle before). Targets (the issue's): ≥ 300 deliveries/s, lag p99 < 2 s.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import type { Measure, MeasureResult } from './lib/context';
import { submitMany, trackStatuses, waitAllStatus } from './lib/jobs';
import { cpuTimeMs } from './lib/proc';
import { cpuJiffies } from './lib/settle';
import { rssBytes, sampleRss } from './lib/proc';
import { startBenchServer } from './lib/server';
import { dist, fmtBytes, fmtMs, nowMs, round, sleep } from './lib/util';

interface Arrival {
  id: string;
  at: number;
  eventAt: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** The JobEvent id a `json` body carries (`data.eventId`); NaN when unreadable. */
function eventIdOf(body: string): number {
  try {
    return Number((JSON.parse(body) as { data: { eventId: number } }).data.eventId);
  } catch {
    return NaN;
  }
}

function receiver(): Promise<{ server: http.Server; url: string; got: Arrival[] }> {
  const got: Arrival[] = [];
  const server = http.createServer({ keepAlive: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      let eventAt = NaN;
      try {
        eventAt = Date.parse((JSON.parse(body) as { timestamp: string }).timestamp);
      } catch {
        /* counted as unparsable below */
      }
      got.push({ id: String(req.headers['webhook-id']), at, eventAt, body, headers: req.headers });
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got })));
}

export const webhooks: Measure = {
  name: 'webhooks',
  title: 'Webhooks',
  async run(ctx): Promise<MeasureResult> {
    const n = ctx.quick ? 100 : 1000;
    const rx = await receiver();
    const server = await startBenchServer({ label: 'webhooks', env: { JOBDECK_CAPACITY_CHECK: '0', JOBDECK_WEBHOOK_ALLOW_PRIVATE: '1' }, profile: ctx.profile });
    const fifo = path.join(server.home, 'gate.fifo');
    execFileSync('mkfifo', [fifo]);
    try {
      const created = await server.json<{ secret: string }>('/api/webhooks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench', url: rx.url, events: ['job.succeeded'] }) });
      await sleep(1000);
      const idleRss = rssBytes(server.pid) ?? 0;
      const tracker = await trackStatuses(server);
      ctx.log(`webhooks: submitting ${n} jobs that wait on one pipe…`);
      const ids = await submitMany(server, n, `cat ${fifo} > /dev/null`, 16, 'webhooks');
      await waitAllStatus(server, tracker, ids, 'RUNNING', 180_000);
      await sleep(2000);
      ctx.log('webhooks: all RUNNING; opening the gate…');
      const rss = sampleRss(server.pid, 100);
      const gateAt = nowMs();
      const cpu0 = cpuTimeMs(server.pid) ?? 0;
      const machine0 = cpuJiffies();
      // Opening the write end releases every reader; closing it gives them EOF. A job that reached
      // its `cat` late waits for the next opening.
      const open = () => promisify(execFile)('bash', ['-c', `exec 3>${fifo}; sleep 0.3; exec 3>&-`]);
      let done = false;
      const deliveredAll = (async () => {
        for (;;) {
          if (new Set(rx.got.map((g) => g.id)).size >= n) return nowMs();
          if (nowMs() - gateAt > 300_000) return null;
          await sleep(50);
        }
      })();
      void (async () => {
        while (!done) {
          // The last opening blocks once no job reads (no reader left): the cleanup kills it.
          await open().catch(() => undefined);
          await sleep(1000);
        }
      })();
      // --profile: the server's CPU profile from the gate to the last arrival (bench/README.md "Profiles").
      const { value: allAt, profile } = await server.profileWindow('deliveries', () => deliveredAll);
      done = true;
      const serverCpuMs = (cpuTimeMs(server.pid) ?? 0) - cpu0;
      const machine1 = cpuJiffies();
      const machineBusy = (machine1.busy - machine0.busy) / Math.max(1, machine1.total - machine0.total);
      const mem = rss.stop();
      const firstEventAt = Math.min(...rx.got.map((g) => g.eventAt));
      const lastEventAt = Math.max(...rx.got.map((g) => g.eventAt));
      // One subscription's deliveries arrive in event order (docs/design.md §10): count the
      // first arrivals whose event id is below one that arrived before them.
      let outOfOrder = 0;
      let maxEventId = -Infinity;
      const seen = new Set<string>();
      for (const g of rx.got) {
        if (seen.has(g.id)) continue;
        seen.add(g.id);
        const eventId = eventIdOf(g.body);
        if (eventId < maxEventId) outOfOrder++;
        maxEventId = Math.max(maxEventId, eventId);
      }
      const lag = dist(rx.got.map((g) => g.at - g.eventAt));
      const ids1 = rx.got.map((g) => g.id);
      const dupes = ids1.length - new Set(ids1).size;
      const wh = new Webhook(created.secret);
      let bad = 0;
      for (const g of rx.got) {
        try {
          wh.verify(g.body, g.headers as Record<string, string>);
        } catch {
          bad++;
        }
      }
      const spanMs = allAt === null ? null : allAt - firstEventAt;
      const perSec = spanMs ? (n / spanMs) * 1000 : 0;
      tracker.close();
      const notes: string[] = [];
      if (allAt === null) notes.push(`only ${new Set(ids1).size} of ${n} deliveries arrived within 300 s`);
      if (dupes) notes.push(`${dupes} deliveries arrived twice (same id)`);
      if (outOfOrder) notes.push(`${outOfOrder} deliveries arrived after a later event's`);
      return {
        rows: [
          { metric: `${n} job.succeeded deliveries: first job end → last delivery; deliveries/s`, value: spanMs === null ? 'timeout' : `${fmtMs(spanMs)}; ${perSec.toFixed(1)}/s`, target: '≥ 300/s', pass: spanMs !== null && perSec >= 300 },
          { metric: 'lag event (JobEvent.at) → arrival p50 / p99 / max', value: `${fmtMs(lag.p50)} / ${fmtMs(lag.p99)} / ${fmtMs(lag.max)}`, target: 'p99 < 2 s', pass: allAt !== null && lag.p99 < 2000 },
          { metric: 'signatures verified (standardwebhooks); duplicates; out of event order', value: `${rx.got.length - bad} of ${rx.got.length}; ${dupes}; ${outOfOrder}`, pass: bad === 0 && dupes === 0 && outOfOrder === 0 ? null : false },
          { metric: 'first → last job end (JobEvent.at): the events themselves; last job end → last delivery', value: `${fmtMs(lastEventAt - firstEventAt)}; ${allAt === null ? 'timeout' : fmtMs(allAt - lastEventAt)}` },
          { metric: 'server CPU per delivery, gate → last delivery; the machine busy meanwhile (all cores)', value: `${(serverCpuMs / n).toFixed(2)} ms; ${Math.round(machineBusy * 100)} %` },
          { metric: 'server RSS max while sending; idle before', value: `${fmtBytes(mem.maxBytes)}; ${fmtBytes(idleRss)}` },
          { metric: 'gate opened → first job end', value: fmtMs(firstEventAt - gateAt) },
        ],
        data: { jobs: n, spanMs, perSec: round(perSec, 1), lag, duplicates: dupes, badSignatures: bad, rssMax: mem.maxBytes, rssIdle: idleRss, gateToFirstEventMs: firstEventAt - gateAt, serverCpuMs: round(serverCpuMs), machineBusy: round(machineBusy, 3), eventSpanMs: lastEventAt - firstEventAt, tailMs: allAt === null ? null : allAt - lastEventAt, outOfOrder, profile },
        notes,
      };
    } finally {
      await server.stop();
      rx.server.close();
    }
  },
};
