import type { Metadata } from 'next';
import { Suspense } from 'react';
import { JobsPage } from '@/components/jobs/JobsPage';

export const metadata: Metadata = { title: 'Jobs · jobdeck' };

export default function Home() {
  // The list reads its filters from the URL (useSearchParams), which wants a Suspense boundary.
  return (
    <Suspense>
      <JobsPage />
    </Suspense>
  );
}
