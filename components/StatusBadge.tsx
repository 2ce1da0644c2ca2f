/** A status pill coloured by tone (lib/ui/format.ts statusTone). */
import { statusLabel, statusTone } from '@/lib/ui/format';

export function StatusBadge({ status, title }: { status: string; title?: string | null }) {
  return (
    <span className={`badge tone-${statusTone(status)}`} title={title ?? undefined} data-status={status}>
      {statusLabel(status)}
    </span>
  );
}
