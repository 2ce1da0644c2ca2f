import { redirect } from 'next/navigation';

/** /jobs is the jobs list at /. */
export default function JobsIndex() {
  redirect('/');
}
