'use client';
/**
 * Header badge: live / connecting / reconnecting (with the next try) / failed. A planned server
 * restart (the server said so: lib/ui/socket.ts) reads "Server restarting — reconnecting…", not
 * a countdown or a close code.
 */
import { useConnection, useNow } from '@/lib/ui/hooks';

export function ConnectionIndicator() {
  const c = useConnection();
  const now = useNow(1000);
  let label: string;
  switch (c.state) {
    case 'live':
      label = 'Live';
      break;
    case 'connecting':
      label = 'Connecting…';
      break;
    case 'reconnecting': {
      const s = c.nextRetryAt ? Math.max(0, Math.ceil((c.nextRetryAt - now) / 1000)) : 0;
      label = c.restarting ? 'Server restarting — reconnecting…' : s > 0 ? `Reconnecting in ${s}s` : 'Reconnecting…';
      break;
    }
    case 'failed':
      label = 'Disconnected';
      break;
    default:
      label = 'Idle';
  }
  const title = c.detail && !c.restarting ? `${label} — ${c.detail}` : c.state === 'live' ? 'Updates arrive live over WebSocket' : label;
  return (
    <span className="conn" data-state={c.state} data-restarting={c.restarting || undefined} role="status" aria-live="polite" title={title} data-testid="connection">
      <span className="conn-dot" aria-hidden="true" />
      <span className="conn-label">{label}</span>
      <span className="visually-hidden">{c.state === 'live' ? '' : title}</span>
    </span>
  );
}
