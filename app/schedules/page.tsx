import type { Metadata } from 'next';
import { SchedulesPage } from '@/components/schedules/SchedulesPage';

export const metadata: Metadata = { title: 'Schedules · jobdeck' };

/** Jobs on a cron schedule: next and last fires, pause/resume, run now (docs/design.md §19 "Schedules"). */
export default function Schedules() {
  return <SchedulesPage />;
}
