/**
 * The dashboard's connection registry: every live WebSocket (list stream, job stream) reports
 * its state here and the header's indicator shows the worst one. A tiny external store for
 * React's useSyncExternalStore. Browser-safe, no DOM.
 */

/** State of one reconnecting socket. */
export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'closed' | 'failed';

/** What the indicator shows for all sockets together. */
export interface ConnectionSummary {
  /** 'idle' when no socket is open on this page. */
  state: 'idle' | 'live' | 'connecting' | 'reconnecting' | 'failed';
  /** When reconnecting: ms epoch of the next try (the soonest among sockets), else null. */
  nextRetryAt: number | null;
  /** The last error text a failed socket gave, if any. */
  detail: string | null;
  /** Reconnecting because the server said it is restarting (a planned stop, not a failure). */
  restarting: boolean;
}

interface Entry {
  state: ConnectionState;
  nextRetryAt: number | null;
  detail: string | null;
  restarting: boolean;
}

const IDLE: ConnectionSummary = { state: 'idle', nextRetryAt: null, detail: null, restarting: false };

const entries = new Map<string, Entry>();
const listeners = new Set<() => void>();
let snapshot: ConnectionSummary = IDLE;

function summarise(): ConnectionSummary {
  const list = [...entries.values()].filter((e) => e.state !== 'closed');
  if (list.length === 0) return IDLE;
  const failed = list.find((e) => e.state === 'failed');
  if (failed) return { state: 'failed', nextRetryAt: null, detail: failed.detail, restarting: false };
  const retrying = list.filter((e) => e.state === 'reconnecting');
  if (retrying.length) {
    const next = retrying.map((e) => e.nextRetryAt).filter((x): x is number => x !== null);
    // One socket told of the restart is enough: the others lost the same server.
    const told = retrying.find((e) => e.restarting);
    return { state: 'reconnecting', nextRetryAt: next.length ? Math.min(...next) : null, detail: (told ?? retrying[0]).detail, restarting: !!told };
  }
  if (list.some((e) => e.state === 'connecting')) return { state: 'connecting', nextRetryAt: null, detail: null, restarting: list.some((e) => e.restarting) };
  return { state: 'live', nextRetryAt: null, detail: null, restarting: false };
}

/** Records the state of socket `name` (state 'closed' removes it from the summary). */
export function reportConnection(name: string, state: ConnectionState, extra: { nextRetryAt?: number | null; detail?: string | null; restarting?: boolean } = {}): void {
  if (state === 'closed') entries.delete(name);
  else entries.set(name, { state, nextRetryAt: extra.nextRetryAt ?? null, detail: extra.detail ?? null, restarting: !!extra.restarting });
  const next = summarise();
  if (next.state === snapshot.state && next.nextRetryAt === snapshot.nextRetryAt && next.detail === snapshot.detail && next.restarting === snapshot.restarting) return;
  snapshot = next;
  for (const fn of listeners) fn();
}

/** useSyncExternalStore subscribe. */
export function subscribeConnections(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** useSyncExternalStore snapshot (stable object between changes). */
export function connectionSnapshot(): ConnectionSummary {
  return snapshot;
}

/** Server render snapshot. */
export function serverConnectionSnapshot(): ConnectionSummary {
  return IDLE;
}
