import { rankLogPath } from '../jobs/paths';
import { openLog, type LogSource } from '../logs/source';
import { readJobLogs, type StoreScope } from '../store';
import { notFound } from './errors';
import { assertLogsKept } from './logs';

/**
 * `GET /api/jobs/:id/logs/all`: the whole job's logs as one text file — every task in order,
 * every attempt of it in order, and every rank of a multi-node attempt, each section under one
 * plain header line (`==> task 0 train · attempt 2 (exit 1) <==`, `… · attempt 1 · rank 1 (exit
 * 0) <==`; a task that never ran: `==> task 1 eval · no attempt (CANCELLED) <==`). A section holds
 * its log file's bytes exactly, up to the size the file had when the section was reached; a header
 * always starts a line (a newline is added only after a log whose last line was left open).
 * Streamed as the client reads (256 KiB at a time, one file open at a time), never whole files in
 * memory; a compressed log (docs/design.md §8) is inflated on the way. Named `job-<id>-<name>.log`.
 */

const PIECE = 256 * 1024;

/** One section of the file: its header line and its log (null: a task without attempts). */
interface Section {
  header: string;
  file: string | null;
}

function nodesOf(spec: unknown): number {
  const n = Number((spec as { numNodes?: unknown } | null)?.numNodes);
  return Number.isInteger(n) && n > 1 ? n : 1;
}

/** The download file name of a job's whole log: `job-<id>-<name>.log`, the name made file-safe. */
export function jobLogFileName(jobId: number, name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '').slice(0, 80);
  return `job-${jobId}${safe ? `-${safe}` : ''}.log`;
}

/** The sections of a job's whole log, in order. @throws ApiError 404 for an unknown job. */
export async function jobLogSections(store: StoreScope, jobId: number): Promise<{ name: string; sections: Section[] }> {
  const job = await readJobLogs(store, jobId);
  if (!job) throw notFound(`job ${jobId} does not exist`);
  const sections: Section[] = [];
  for (const t of job.tasks) {
    const task = `task ${t.index}${t.name ? ` ${t.name}` : ''}`;
    if (t.attempts.length === 0) sections.push({ header: `==> ${task} · no attempt (${t.status}) <==\n`, file: null });
    const nodes = nodesOf(t.spec);
    for (const a of t.attempts) {
      const end = a.exitCode !== null ? `exit ${a.exitCode}` : a.status;
      for (let k = 0; k < nodes; k++) {
        sections.push({ header: `==> ${task} · attempt ${a.number}${nodes > 1 ? ` · rank ${k}` : ''} (${end}) <==\n`, file: a.logPath ? rankLogPath(a.logPath, k) : null });
      }
    }
  }
  return { name: job.name, sections };
}

/** The streamed response of GET /api/jobs/:id/logs/all (see the module comment). */
export async function jobLogResponse(store: StoreScope, jobId: number): Promise<Response> {
  const { name, sections } = await jobLogSections(store, jobId);
  await assertLogsKept(store, jobId);
  const enc = new TextEncoder();
  let i = 0;
  let fh: LogSource | null = null;
  let left = 0;
  let pos = 0;
  let lastByte = 0x0a;
  const closeFile = async () => {
    const f = fh;
    fh = null;
    await f?.close();
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(ctl) {
      try {
        if (fh && left > 0) {
          const buf = Buffer.allocUnsafe(Math.min(PIECE, left));
          const bytesRead = await fh.read(buf, 0, buf.length, pos);
          if (bytesRead > 0) {
            pos += bytesRead;
            left -= bytesRead;
            lastByte = buf[bytesRead - 1];
            ctl.enqueue(buf.subarray(0, bytesRead));
            return;
          }
          left = 0;
        }
        await closeFile();
        if (i >= sections.length) {
          ctl.close();
          return;
        }
        const s = sections[i++];
        ctl.enqueue(enc.encode(`${lastByte === 0x0a ? '' : '\n'}${s.header}`));
        lastByte = 0x0a;
        fh = await openLog(s.file, { sequential: true });
        left = fh ? await fh.size() : 0;
        pos = 0;
      } catch (err) {
        await closeFile();
        ctl.error(err);
      }
    },
    async cancel() {
      await closeFile();
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': 'text/plain; charset=utf-8',
      'content-disposition': `attachment; filename="${jobLogFileName(jobId, name)}"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}
