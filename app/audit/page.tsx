import type { Metadata } from 'next';
import { Suspense } from 'react';
import { AuditPage } from '@/components/team/AuditPage';

export const metadata: Metadata = { title: 'Audit log · jobdeck' };

export default function Page() {
  // The page reads its filters from the URL (useSearchParams), which wants a Suspense boundary.
  return (
    <Suspense>
      <AuditPage />
    </Suspense>
  );
}
