/**
 * GET /api/monitor: the monitor's state (lib/monitor/state.ts MonitorState) and, with several
 * servers on one PostgreSQL (docs/design.md §11), the live ones under `servers`. The server view
 * has one schema, here, held to lib/api/types.ts ServerView (the type `jobdeck servers` and the
 * dashboard read) at compile time.
 */
import { z } from 'zod';
import type { MonitorHandle, MonitorState } from '../monitor';
import type { LiveServer } from '../store';
import { isoTime, named } from './schemas';
import type { MonitorServers, ServerView } from './types';

export const ServerViewSchema = named(
  z.object({
    id: z.string().meta({ description: 'The server id (new at each start).' }),
    host: z.string(),
    pid: z.number().int(),
    startedAt: isoTime(),
    heartbeatAgeMs: z.number().meta({ description: 'Milliseconds since its last heartbeat.' }),
    jobsOwned: z.number().int().meta({ description: 'Live jobs it owns by lease.' }),
    takeovers: z.number().int().meta({ description: 'Jobs it took over from another server since its start.' }),
    self: z.boolean().meta({ description: 'True for the server that answered.' }),
  }),
  'Server',
  'A live server on the database (several servers on one PostgreSQL).',
);

/** The API's view of one live server; `selfId` is the answering server's id. */
export function serverView(r: LiveServer, selfId: string): ServerView {
  return { id: r.id, host: r.host, pid: r.pid, startedAt: r.startedAt.toISOString(), heartbeatAgeMs: r.heartbeatAgeMs, jobsOwned: r.jobsOwned, takeovers: r.takeovers, self: r.id === selfId };
}

/** The answer of GET /api/monitor: the state, plus `servers` when the monitor holds leases. */
export async function monitorAnswer(monitor: MonitorHandle): Promise<MonitorState & MonitorServers> {
  const live = (await monitor.servers?.()) ?? null;
  return { ...monitor.state(), ...(live ? { servers: live.rows.map((r) => serverView(r, live.selfId)) } : {}) };
}

// Compile-time: the schema and the TypeScript contract (lib/api/types.ts) agree.
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Check<T extends true> = T;
export type MonitorSchemaChecks = [Check<Equals<z.infer<typeof ServerViewSchema>, ServerView>>];
