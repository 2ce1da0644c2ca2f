import type { Metadata } from 'next';
import { UsersPage } from '@/components/team/UsersPage';

export const metadata: Metadata = { title: 'Users · jobdeck' };

/** The users, their roles, quotas and logins (admins; docs/design.md §15). */
export default function Users() {
  return <UsersPage />;
}
