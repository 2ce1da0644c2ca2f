import type { Metadata } from 'next';
import { InsightsPage } from '@/components/insights/InsightsPage';

export const metadata: Metadata = { title: 'Insights · jobdeck' };

export default function Insights() {
  return <InsightsPage />;
}
