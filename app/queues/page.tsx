import type { Metadata } from 'next';
import { QueuesPage } from '@/components/queues/QueuesPage';

export const metadata: Metadata = { title: 'Queues · jobdeck' };

/** The operator queues: limits, what each holds, and their settings (docs/design.md §6 "Admission"). */
export default function Queues() {
  return <QueuesPage />;
}
