'use client';
/**
 * The dashboard frame: header (brand, navigation, connection indicator, theme, logout) around
 * every page, with the data providers. The login page gets none of it (no live sockets before
 * the user is signed in). `viewer` is who the server rendered the page for (GET /api/users/me's
 * answer): a page whose API the viewer's role may not call shows NotAllowed instead of itself.
 * The dashboard's links do not prefetch (`prefetch={false}`): every page is rendered for its
 * viewer, so a prefetch is a server render per link on every page view — 33 of them for a short
 * jobs list — which a loaded server answers before the page's own API calls.
 */
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import type { ReactNode } from 'react';
import type { UserMe } from '@/lib/api/types';
import { refusedPage } from '@/lib/ui/pages';
import { useViewer } from '@/lib/ui/team-hooks';
import type { ThemeChoice } from '@/lib/ui/theme';
import { ConnectionIndicator } from './ConnectionIndicator';
import { NavLinks } from './NavLinks';
import { NotAllowed } from './NotAllowed';
import { Providers } from './Providers';
import { ThemeToggle } from './ThemeToggle';

/** Pages outside the dashboard frame. */
const BARE = ['/login', '/logout'];

export function AppShell({ theme, viewer, children, logout }: { theme: ThemeChoice; viewer: UserMe | null; children: ReactNode; logout?: ReactNode }) {
  const path = usePathname() ?? '/';
  if (BARE.some((p) => path === p || path.startsWith(`${p}/`))) return <>{children}</>;
  return (
    <Providers viewer={viewer}>
      <Frame path={path} logout={logout} theme={theme}>
        {children}
      </Frame>
    </Providers>
  );
}

/** The header and the page, or NotAllowed (for the viewer the query cache holds: the server's answer, then any newer one). */
function Frame({ path, theme, children, logout }: { path: string; theme: ThemeChoice; children: ReactNode; logout?: ReactNode }) {
  const viewer = useViewer();
  const refused = refusedPage(viewer, path);
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="app-header">
        <div className="app-header-inner">
          <Link prefetch={false} href="/" className="brand" aria-label="jobdeck home">
            <span className="brand-mark" aria-hidden="true" />
            <span className="brand-text">jobdeck</span>
          </Link>
          <NavLinks />
          <span className="header-spacer" />
          <div className="header-tools">
            <ConnectionIndicator />
            <ThemeToggle initial={theme} />
            {logout}
          </div>
        </div>
      </header>
      <main id="main" className="app-main">
        {refused ? <NotAllowed page={refused} viewer={viewer} /> : children}
      </main>
    </>
  );
}
