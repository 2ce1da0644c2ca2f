import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { JobView } from '@/components/job/JobView';

type Params = { params: Promise<{ id: string }> };

function parseId(raw: string): number | null {
  return /^\d{1,10}$/.test(raw) && Number(raw) > 0 && Number(raw) <= 2_147_483_647 ? Number(raw) : null;
}

export async function generateMetadata({ params }: Params): Promise<Metadata> {
  const id = parseId((await params).id);
  return { title: id ? `Job ${id} · jobdeck` : 'Job · jobdeck' };
}

export default async function JobPage({ params }: Params) {
  const id = parseId((await params).id);
  if (id === null) notFound();
  return <JobView key={id} id={id} />;
}
