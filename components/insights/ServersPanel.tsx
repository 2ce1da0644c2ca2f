'use client';
/**
 * The live servers of the database (GET /api/monitor `servers`, docs/design.md "Replicas"): id,
 * host, pid, started, heartbeat age, jobs owned, takeovers; the server answering is marked. On
 * one server (PGlite, no leases) the list is absent and the panel says so.
 */
import { useQuery } from '@tanstack/react-query';
import { api } from '@/lib/ui/api';
import { formatDuration } from '@/lib/ui/format';
import { useNow } from '@/lib/ui/hooks';
import { RelativeTime } from '../Time';

export function ServersPanel() {
  const q = useQuery({ queryKey: ['monitor-servers'], queryFn: ({ signal }) => api.monitor(signal), refetchInterval: 5_000 });
  const now = useNow(5_000);
  const servers = q.data?.servers;
  return (
    <div className="card insights-servers" data-testid="servers-panel">
      <h2 className="insights-h2">Servers</h2>
      {q.isError ? (
        <p className="muted" role="alert">
          Could not load the servers: {(q.error as Error).message}
        </p>
      ) : !q.data ? (
        <p className="muted">Loading…</p>
      ) : !servers ? (
        <p className="muted">One server: this database is not shared (no leases).</p>
      ) : (
        <table className="insights-table" data-testid="servers">
          <thead>
            <tr>
              <th>Server</th>
              <th>Host</th>
              <th>PID</th>
              <th>Started</th>
              <th>Heartbeat</th>
              <th>Jobs owned</th>
              <th>Takeovers</th>
            </tr>
          </thead>
          <tbody>
            {servers.map((s) => (
              <tr key={s.id} data-self={s.self || undefined}>
                <td className="mono">
                  {s.id}
                  {s.self ? <span className="muted"> (this one)</span> : null}
                </td>
                <td>{s.host}</td>
                <td>{s.pid}</td>
                <td>
                  <RelativeTime iso={s.startedAt} now={now} />
                </td>
                <td>{formatDuration(s.heartbeatAgeMs)} ago</td>
                <td>{s.jobsOwned}</td>
                <td>{s.takeovers}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
