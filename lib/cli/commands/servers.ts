/**
 * `jobdeck servers`: the live servers on the server's database (GET /api/monitor `servers`,
 * docs/design.md "Replicas") — id, host, pid, started, heartbeat age, jobs owned, takeovers.
 * One server without leases (PGlite) has no list: it says so.
 */
import Table from 'cli-table3';
import type { Command } from 'commander';
import type { MonitorServers, ServerView } from '../../api/types';
import type { CliContext } from '../context';
import { EXIT } from '../exit-codes';
import { PLAIN_CHARS } from './manage';

/** The servers as a plain table; `*` marks the one that answered. */
export function renderServers(servers: readonly ServerView[]): string {
  const table = new Table({ head: ['SERVER', 'HOST', 'PID', 'STARTED', 'HEARTBEAT', 'JOBS', 'TAKEOVERS'], chars: PLAIN_CHARS, style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true } });
  for (const s of servers) table.push([`${s.id}${s.self ? ' *' : ''}`, s.host, String(s.pid), s.startedAt, `${(s.heartbeatAgeMs / 1000).toFixed(1)} s ago`, String(s.jobsOwned), String(s.takeovers)]);
  return table.toString().split('\n').map((l) => l.replace(/\s+$/, '')).join('\n');
}

/** The action of `servers`. */
export async function serversAction(ctx: CliContext, opts: { json?: boolean }): Promise<number> {
  const state = await (await ctx.client()).request<MonitorServers>('GET', '/api/monitor', { what: 'monitor' });
  const servers = state.servers ?? null;
  if (opts.json) ctx.out(JSON.stringify(servers, null, 2));
  else ctx.out(servers ? renderServers(servers) : 'One server, no replicas (leases are used with several servers on one PostgreSQL).');
  return EXIT.OK;
}

/** Adds `servers` to the program. */
export function addServers(program: Command, ctx: () => CliContext, run: (fn: () => Promise<number>) => Promise<void>): void {
  program
    .command('servers')
    .summary('list the live servers on this database (replicas)')
    .description(
      "The jobdeck servers sharing this server's PostgreSQL database: id (new at each start), host, pid, " +
        'start time, heartbeat age, the jobs each owns by lease and how many it took over from servers ' +
        'that died. `*` marks the server that answered.',
    )
    .option('--json', 'print the list as JSON (GET /api/monitor servers; null with one server)')
    .action(async (opts: { json?: boolean }) => run(() => serversAction(ctx(), opts)));
}
