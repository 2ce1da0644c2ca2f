import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

let instance: Logger | undefined;

/**
 * The structured logger (pino), created on first use from the environment. JSON lines by
 * default; pretty, coloured lines when stdout is a terminal or `JOBDECK_LOG_PRETTY=1`. Level from
 * `JOBDECK_LOG_LEVEL` (default info; `silent` in tests unless set). Uses a synchronous pretty
 * stream, not a worker transport, so it works the same inside Next.js route bundles and the
 * custom server. It is configuration, not state: a route bundle's own module copy makes an
 * identical logger writing to the same stdout (docs/design.md §9, "Wiring and dependencies").
 */
export function logger(): Logger {
  return (instance ??= createLogger());
}

function createLogger(): Logger {
  const level = process.env.JOBDECK_LOG_LEVEL || (process.env.VITEST ? 'silent' : 'info');
  const wantPretty = process.env.JOBDECK_LOG_PRETTY ? process.env.JOBDECK_LOG_PRETTY === '1' : !!process.stdout.isTTY;
  const opts = { level, base: { pid: process.pid }, name: 'jobdeck' };
  if (wantPretty) {
    return pino(opts, pretty({ colorize: !!process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name', sync: true }));
  }
  return pino(opts);
}
