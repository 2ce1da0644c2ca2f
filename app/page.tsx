import type { Metadata } from 'next';
import { JobsPage } from '@/components/jobs/JobsPage';

export const metadata: Metadata = { title: 'Jobs · jobdeck' };

export default function Home() {
  return <JobsPage />;
}
