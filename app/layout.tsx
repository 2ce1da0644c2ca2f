import type { Metadata, Viewport } from 'next';
import { cookies, headers } from 'next/headers';
import type { ReactNode } from 'react';
import { AppShell } from '@/components/AppShell';
import { LogoutButton } from '@/components/auth/LogoutButton';
import { pageViewer } from '@/lib/server/route';
import { parseTheme, THEME_COOKIE } from '@/lib/ui/theme';
// Tokens and shared controls first, then each part of the dashboard, the responsive rules last
// (the order is the cascade's).
import './globals.css';
import './styles/jobs-list.css';
import './styles/job-page.css';
import './styles/log-viewer.css';
import './styles/new-job.css';
import './styles/insights.css';
import './styles/team.css';
import './styles/webhooks.css';
import './styles/responsive.css';

export const metadata: Metadata = {
  title: 'jobdeck',
  description: 'Managed jobs: run, watch, retry, recover.',
  // public/favicon.svg (the header's mark) for browsers that take SVG; public/favicon.ico
  // (16 and 32 px, scripts/make-favicon-ico.mjs) for the rest and for /favicon.ico requests.
  icons: {
    icon: [
      { url: '/favicon.ico', sizes: '16x16 32x32' },
      { url: '/favicon.svg', type: 'image/svg+xml' },
    ],
  },
};

export const viewport: Viewport = { width: 'device-width', initialScale: 1 };

export default async function RootLayout({ children }: { children: ReactNode }) {
  const theme = parseTheme((await cookies()).get(THEME_COOKIE)?.value);
  // Who the page is drawn for: its navigation and controls are the viewer's role's from the
  // server's HTML on (lib/ui/pages.ts, lib/ui/permissions.ts).
  const h = await headers();
  const viewer = pageViewer((name) => h.get(name));
  return (
    <html lang="en" data-theme={theme === 'system' ? undefined : theme}>
      <body>
        <AppShell theme={theme} viewer={viewer} logout={<LogoutButton className="btn btn-ghost btn-sm" />}>
          {children}
        </AppShell>
      </body>
    </html>
  );
}
