import type { Metadata } from 'next';
import { NewJobForm } from '@/components/new/NewJobForm';
import { STARTER_YAML } from '@/lib/ui/templates';
import { loadTemplates } from './templates';

export const metadata: Metadata = { title: 'New job · jobdeck' };

type Props = { searchParams: Promise<{ template?: string | string[]; from?: string | string[] }> };

export default async function NewJobPage({ searchParams }: Props) {
  const sp = await searchParams;
  const templates = loadTemplates();
  const wanted = typeof sp.template === 'string' ? sp.template : undefined;
  const from = typeof sp.from === 'string' && /^\d{1,10}$/.test(sp.from) ? Number(sp.from) : null;
  const initialTemplate = templates.find((t) => t.id === wanted)?.id ?? null;
  return <NewJobForm templates={templates} starter={STARTER_YAML} initialTemplate={initialTemplate} fromJob={from} />;
}
