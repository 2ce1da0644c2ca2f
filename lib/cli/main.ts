/**
 * The `jobdeck` command (commander): launch, queue, logs, cancel, delete, status, server.
 * bin/jobdeck.mjs loads this file with tsx and calls main(); the answer is the process exit code
 * (lib/cli/exit-codes.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { addFlow } from './commands/flow';
import { addLaunch } from './commands/launch';
import { addLogs } from './commands/logs';
import { addManage } from './commands/manage';
import { addScheduling } from './commands/scheduling';
import { addServers } from './commands/servers';
import { addQueue } from './commands/queue';
import { addServer } from './commands/server';
import { addWebhooks } from './commands/webhooks';
import { addTeam } from './commands/team';
import { setting } from '../config';
import type { GlobalOptions } from './config';
import { CliContext, type CliIO, processIO } from './context';
import { CliError } from './errors';
import { EXIT } from './exit-codes';
import { allCommands, EXIT_CODES_POINTER, helpFooter, helpWidthOf } from './help';
import { projectRoot } from '../project-root';

export { helpFooter } from './help';

function cliVersion(): string {
  try {
    return (JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/**
 * Builds the program. Every action reports its exit code through `setCode`; commander's own
 * errors (unknown option, missing argument) exit USAGE.
 */
export function buildProgram(io: CliIO, setCode: (code: number) => void): Command {
  const program = new Command();
  let ctx: CliContext | null = null;
  const getCtx = () => (ctx ??= new CliContext(io, () => program.opts<GlobalOptions>()));
  const run = async (fn: () => Promise<number>) => setCode(await fn());
  const outWidth = helpWidthOf(io.stdout as { isTTY?: boolean; columns?: number });
  const errWidth = helpWidthOf(io.stderr as { isTTY?: boolean; columns?: number });
  program
    .name('jobdeck')
    .description('jobdeck — submit, follow and manage jobs on a jobdeck server (managed jobs and pipelines with retries and live logs).')
    .version(cliVersion(), '-V, --version')
    .option('--url <url>', 'server address (default $JOBDECK_URL, or http://127.0.0.1:3000)')
    .option('--token <token>', 'API token (default $JOBDECK_TOKEN, or the local server token file)')
    .showHelpAfterError('(run `jobdeck --help` or `jobdeck <command> --help` for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      outputError: (s, write) => write(s),
      getOutHelpWidth: () => outWidth,
      getErrHelpWidth: () => errWidth,
    })
    .addHelpText('after', ({ error }) => helpFooter(error ? errWidth : outWidth));
  addLaunch(program, getCtx, run);
  addQueue(program, getCtx, run);
  addLogs(program, getCtx, run);
  addManage(program, getCtx, run);
  addScheduling(program, getCtx, run);
  addFlow(program, getCtx, run);
  addServers(program, getCtx, run);
  addWebhooks(program, getCtx, run);
  addTeam(program, getCtx, run);
  addServer(program, getCtx, run);
  // The exit-code table once, in the top-level help; each command's help says where it is.
  for (const c of allCommands(program)) c.addHelpText('after', `\n${EXIT_CODES_POINTER}`);
  return program;
}

/**
 * Runs the CLI on `argv` (without node and script: `['logs', '7']`). Answers the exit code;
 * never throws. Errors are printed to stderr as `error: <message>`.
 */
export async function main(argv: string[], io: CliIO = processIO()): Promise<number> {
  let code: number = EXIT.OK;
  const program = buildProgram(io, (c) => (code = c));
  if (argv.length === 0) {
    program.outputHelp();
    return EXIT.USAGE;
  }
  const red = (s: string) => (new CliContext(io, () => ({})).errColors.red(s));
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.OK;
      return EXIT.USAGE;
    }
    if (err instanceof CliError) {
      io.stderr.write(`${red('error:')} ${err.message}\n`);
      for (const d of err.details) io.stderr.write(`  ${d}\n`);
      return err.exitCode;
    }
    const e = err as Error;
    io.stderr.write(`${red('error:')} ${e?.message ?? String(err)}\n`);
    if (setting('JOBDECK_DEBUG', io.env) !== null) io.stderr.write(`${e?.stack ?? ''}\n`);
    return EXIT.INTERNAL;
  }
}
