import type { Metadata } from 'next';
import { AuditPage } from '@/components/team/AuditPage';

export const metadata: Metadata = { title: 'Audit log · jobdeck' };

export default function Page() {
  return <AuditPage />;
}
