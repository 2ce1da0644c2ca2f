import type { Metadata } from 'next';
import { WebhooksPage } from '@/components/webhooks/WebhooksPage';

export const metadata: Metadata = { title: 'Webhooks · jobdeck' };

export default function Page() {
  return <WebhooksPage />;
}
