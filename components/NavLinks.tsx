'use client';
/** Header navigation with aria-current on the page you are on; Users only for an admin. */
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useMe } from '@/lib/ui/team-hooks';

export function NavLinks() {
  const path = usePathname() ?? '/';
  const admin = useMe().data?.role === 'admin';
  const jobs = path === '/' || (path.startsWith('/jobs') && !path.startsWith('/jobs/new'));
  return (
    <nav className="app-nav" aria-label="Main">
      <Link href="/" aria-current={jobs ? 'page' : undefined}>
        Jobs
      </Link>
      <Link href="/jobs/new" aria-current={path.startsWith('/jobs/new') ? 'page' : undefined}>
        New job
      </Link>
      <Link href="/queues" aria-current={path.startsWith('/queues') ? 'page' : undefined}>
        Queues
      </Link>
      <Link href="/insights" aria-current={path.startsWith('/insights') ? 'page' : undefined}>
        Insights
      </Link>
      <Link href="/webhooks" aria-current={path.startsWith('/webhooks') ? 'page' : undefined}>
        Webhooks
      </Link>
      <Link href="/tokens" aria-current={path.startsWith('/tokens') ? 'page' : undefined}>
        Tokens
      </Link>
      {admin && (
        <Link href="/users" aria-current={path.startsWith('/users') ? 'page' : undefined}>
          Users
        </Link>
      )}
      <Link href="/audit" aria-current={path.startsWith('/audit') ? 'page' : undefined}>
        Audit
      </Link>
    </nav>
  );
}
