'use client';
/**
 * The header's navigation: the pages the viewer may open (lib/ui/pages.ts, by the rows of the
 * authorization table GET /api/users/me answers), with aria-current on the page you are on. On a
 * phone the links do not fit beside the header's controls: a menu button naming the page you are
 * on opens them as a list (NavMenu), so nothing hides off the edge.
 */
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useEffect, useRef, useState } from 'react';
import { pageOf, pagesFor, type DashboardPage } from '@/lib/ui/pages';
import { useViewer } from '@/lib/ui/team-hooks';

/** The phone's navigation: a button with the current page's name and ☰, opening every page's link. */
function NavMenu({ pages, current }: { pages: DashboardPage[]; current: DashboardPage | null }) {
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const path = usePathname();
  // Closes when a link was followed, on Escape and on a press outside.
  useEffect(() => setOpen(false), [path]);
  useEffect(() => {
    if (!open) return;
    const away = (e: Event) => {
      if (!root.current?.contains(e.target as Node)) setOpen(false);
    };
    const esc = (e: KeyboardEvent) => e.key === 'Escape' && setOpen(false);
    document.addEventListener('mousedown', away);
    document.addEventListener('touchstart', away);
    document.addEventListener('keydown', esc);
    return () => {
      document.removeEventListener('mousedown', away);
      document.removeEventListener('touchstart', away);
      document.removeEventListener('keydown', esc);
    };
  }, [open]);
  return (
    <div className="nav-menu" ref={root}>
      <button type="button" className="btn btn-ghost nav-menu-button" aria-expanded={open} aria-controls="nav-menu-list" onClick={() => setOpen((o) => !o)} data-testid="nav-menu-button">
        <span aria-hidden="true">☰</span> {current?.label ?? 'Menu'}
        <span className="visually-hidden"> — menu of {pages.length} pages</span>
      </button>
      {open && (
        <nav id="nav-menu-list" className="nav-menu-list" aria-label="Pages" data-testid="nav-menu">
          {pages.map((p) => (
            <Link prefetch={false} key={p.href} href={p.href} aria-current={current === p ? 'page' : undefined} onClick={() => setOpen(false)}>
              {p.label}
            </Link>
          ))}
        </nav>
      )}
    </div>
  );
}

export function NavLinks() {
  const path = usePathname() ?? '/';
  const pages = pagesFor(useViewer());
  const current = pageOf(path);
  return (
    <>
      <nav className="app-nav" aria-label="Main" data-testid="nav">
        {pages.map((p) => (
          <Link prefetch={false} key={p.href} href={p.href} aria-current={current === p ? 'page' : undefined}>
            {p.label}
          </Link>
        ))}
      </nav>
      <NavMenu pages={pages} current={current} />
    </>
  );
}
