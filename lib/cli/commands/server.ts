/**
 * `jobdeck server`: runs the jobdeck server in this process — exactly what `npm start` runs
 * (server.ts: database, monitor, WebSocket routes, Next.js) but without building the web app
 * first: build it once with `npm run build` (or `JOBDECK_NEXT_DIST=dir npx next build`).
 */
import { missingBuildProblem, projectRoot } from '../../project-root';
import type { Command } from 'commander';
import { cliSetting } from '../config';
import type { CliContext } from '../context';
import { usageError } from '../errors';
import { parseIntArg } from './resolve';

/** The project folder (holding server.ts and the Next.js build). */
export const PROJECT_ROOT = projectRoot();

/** Options of `server`. */
export interface ServerOptions {
  port?: string;
  host?: string;
  dev?: boolean;
}

/**
 * The action of `server`: never resolves while the server runs; server.ts exits the process
 * on SIGINT/SIGTERM (0) or a failed start (1).
 * @throws CliError USAGE when the web app was not built (and not --dev), or a bad --port.
 */
export async function serverAction(ctx: CliContext, opts: ServerOptions): Promise<number> {
  const env = ctx.io.env;
  if (opts.port !== undefined) env.PORT = String(parseIntArg(opts.port, '--port', 0));
  if (opts.host !== undefined) env.HOST = opts.host;
  if (opts.dev) env.JOBDECK_DEV = '1';
  const missing = cliSetting('JOBDECK_DEV', env) ? null : missingBuildProblem(PROJECT_ROOT, cliSetting('JOBDECK_NEXT_DIST', env));
  if (missing) throw usageError(`${missing}, or use --dev`);
  // next() resolves the app from the working directory in places; run from the project folder.
  process.chdir(PROJECT_ROOT);
  await import('../../../server');
  return new Promise<number>(() => undefined);
}

/** Adds `server` to the program. */
export function addServer(program: Command, ctx: () => CliContext, run: (fn: () => Promise<number>) => Promise<void>): void {
  program
    .command('server')
    .summary('run the jobdeck server in this process (the web app must be built: npm run build)')
    .description(
      'Run the jobdeck server here: the same as `npm start` (database, monitor, log streams, dashboard) ' +
        'but without building the web app first — run `npm run build` once before. Listens on ' +
        'HOST:PORT (default 127.0.0.1:3000); data in $JOBDECK_HOME (default ~/.jobdeck), or ' +
        'PostgreSQL with DATABASE_URL. Ctrl-C stops it; running jobs keep running and are picked up ' +
        'again at the next start.',
    )
    .option('-p, --port <port>', 'port to listen on (default $PORT or 3000; 0 picks a free one)')
    .option('--host <host>', 'address to listen on (default $HOST or 127.0.0.1)')
    .option('--dev', 'Next.js development mode (no build needed; slower)')
    .action(async (opts: ServerOptions) => run(() => serverAction(ctx(), opts)));
}
