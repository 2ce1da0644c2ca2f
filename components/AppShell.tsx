'use client';
/**
 * The dashboard frame: header (brand, navigation, connection indicator, theme, logout) around
 * every page, with the data providers. The login page gets none of it (no live sockets before
 * the user is signed in).
 */
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import type { ReactNode } from 'react';
import type { ThemeChoice } from '@/lib/ui/theme';
import { ConnectionIndicator } from './ConnectionIndicator';
import { NavLinks } from './NavLinks';
import { Providers } from './Providers';
import { ThemeToggle } from './ThemeToggle';

/** Pages outside the dashboard frame. */
const BARE = ['/login', '/logout'];

export function AppShell({ theme, children, logout }: { theme: ThemeChoice; children: ReactNode; logout?: ReactNode }) {
  const path = usePathname() ?? '/';
  if (BARE.some((p) => path === p || path.startsWith(`${p}/`))) return <>{children}</>;
  return (
    <Providers>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="app-header">
        <div className="app-header-inner">
          <Link href="/" className="brand" aria-label="jobdeck home">
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
        {children}
      </main>
    </Providers>
  );
}
