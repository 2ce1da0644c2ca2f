'use client';
/**
 * What a page shows instead of itself to a viewer whose role may not use it (its link followed
 * anyway: a bookmark, a shared URL): which page, who is signed in, and the way back. The server
 * refuses the page's API calls the same way (lib/auth/rules.ts).
 */
import Link from 'next/link';
import type { UserMe } from '@/lib/api/types';
import type { DashboardPage } from '@/lib/ui/pages';

export function NotAllowed({ page, viewer }: { page: DashboardPage; viewer: UserMe | null }) {
  return (
    <div className="card empty not-allowed" role="alert" data-testid="not-allowed">
      <h1>{page.label}: not open to your role</h1>
      <p>
        {viewer ? (
          <>
            You are signed in as <strong>{viewer.name}</strong> ({viewer.role}), and the {page.label} page is not open to that role. An admin can change your role on the Users page.
          </>
        ) : (
          'You are not signed in.'
        )}
      </p>
      <Link prefetch={false} href="/" className="btn">
        Back to the jobs
      </Link>
    </div>
  );
}
