import type { Metadata } from 'next';
import { GroupPage } from '@/components/groups/GroupPage';

export const metadata: Metadata = { title: 'Group · jobdeck' };

/** One group (an array or sweep): its progress, its slots, cancel / re-run failed / delete (docs/design.md §17). */
export default async function Group({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <GroupPage id={Number(id)} />;
}
