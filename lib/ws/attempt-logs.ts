import { rankLogPath, timesPath } from '../jobs/paths';
import { LogFollower, logSize } from '../logs/reader';
import { TimesReader } from '../logs/time-index';
import { pumpLog, type PumpIo } from './log-pump';

/**
 * The logs of the attempt a job stream has open: rank 0's alone for a one-node attempt; every
 * rank's — or the one rank a client asked for — of a multi-node attempt, each read from its own
 * offset and sent in turn, one slice each (docs/design.md, "Logs and streams"; the frames:
 * lib/logs/protocol.ts). Rank K's file is rankLogPath(Attempt.logPath, K). Each rank's line
 * times (its time index, lib/logs/time-index.ts) go as `times` messages before its bytes, and
 * again once it is read to its end (entries the index got after the bytes were read).
 */

/** Most entries one `times` message carries (a long index goes as several). */
const TIMES_PER_MESSAGE = 4096;

/** One rank's log as a stream sends it. */
interface RankLog {
  rank: number;
  follower: LogFollower | null;
  times: TimesReader | null;
  /** The next byte to send (advanced past every frame queued on the socket). */
  pos: { offset: number };
  /** Stop reading at this offset (follow=0: the size when opened), else Infinity. */
  limit: number;
}

/** A start offset past the end of a rank's log (the client's resume position is wrong). */
export interface BadOffset {
  rank: number;
  offset: number;
  size: number;
}

/** The open attempt's logs (see the module comment). */
export class AttemptLogs {
  private constructor(private readonly logs: RankLog[]) {}

  /**
   * Opens the logs of `ranks` (in order) of the attempt whose rank-0 log is `logPath`, each from
   * `offsetOf(rank)`. With `follow` false each stops at the size it has now.
   * @returns the logs, or the first start offset past the end of its log.
   */
  static async open(logPath: string | null, ranks: readonly number[], offsetOf: (rank: number) => number, follow: boolean): Promise<AttemptLogs | BadOffset> {
    const logs: RankLog[] = [];
    for (const rank of ranks) {
      const offset = offsetOf(rank);
      const file = logPath ? rankLogPath(logPath, rank) : null;
      const size = offset > 0 || !follow ? await logSize(file) : 0;
      if (offset > size) return { rank, offset, size };
      logs.push({ rank, follower: null, times: null, pos: { offset }, limit: follow ? Infinity : Math.max(size, offset) });
    }
    return new AttemptLogs(logs);
  }

  /** The ranks streamed, in order. */
  get ranks(): number[] {
    return this.logs.map((l) => l.rank);
  }

  /** The next offset of each streamed rank (by rank). */
  offsets(): Map<number, number> {
    return new Map(this.logs.map((l) => [l.rank, l.pos.offset]));
  }

  /** The next offset of the first streamed rank (rank 0, or the one asked for); 0 when none. */
  get firstOffset(): number {
    return this.logs[0]?.pos.offset ?? 0;
  }

  /**
   * Sends one slice of each rank's log from where it is (pumpLog), opening its file first.
   * @returns 'eof' when every rank is at its end, 'more' when one used up its slice, 'closed'
   *   when the socket closed.
   */
  async pump(logPath: string, task: number, number: number, io: PumpIo, onChange: () => void): Promise<'eof' | 'more' | 'closed'> {
    let more = false;
    for (const l of this.logs) {
      l.follower ??= new LogFollower(rankLogPath(logPath, l.rank), l.pos.offset, { onChange });
      l.times ??= new TimesReader(timesPath(rankLogPath(logPath, l.rank)), l.pos.offset);
      await this.sendTimes(l, task, number, io);
      const r = await pumpLog(l.follower, { task, number, limit: l.limit, rank: l.rank }, l.pos, io);
      if (r === 'closed') return 'closed';
      if (r === 'more') more = true;
      else await this.sendTimes(l, task, number, io);
    }
    return more ? 'more' : 'eof';
  }

  /** Sends the rank's index entries appended since its last read (none: nothing sent). */
  private async sendTimes(l: RankLog, task: number, attempt: number, io: PumpIo): Promise<void> {
    const entries = await l.times!.read();
    for (let i = 0; i < entries.length && !io.socket.closed; i += TIMES_PER_MESSAGE) {
      io.socket.send({ type: 'times', task, attempt, ...(l.rank > 0 ? { rank: l.rank } : {}), entries: entries.slice(i, i + TIMES_PER_MESSAGE) });
    }
  }

  /** Closes every follower (idempotent). */
  async close(): Promise<void> {
    await Promise.all(this.logs.map((l) => (l.follower ? l.follower.close() : Promise.resolve())));
  }
}
