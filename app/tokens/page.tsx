import type { Metadata } from 'next';
import { TokensPage } from '@/components/team/TokensPage';

export const metadata: Metadata = { title: 'API tokens · jobdeck' };

export default function Page() {
  return <TokensPage />;
}
