import type { Metadata, Viewport } from 'next';
import { cookies } from 'next/headers';
import type { ReactNode } from 'react';
import { AppShell } from '@/components/AppShell';
import { LogoutButton } from '@/components/auth/LogoutButton';
import { parseTheme, THEME_COOKIE } from '@/lib/ui/theme';
import './globals.css';

export const metadata: Metadata = {
  title: 'jobdeck',
  description: 'Managed jobs: run, watch, retry, recover.',
};

export const viewport: Viewport = { width: 'device-width', initialScale: 1 };

export default async function RootLayout({ children }: { children: ReactNode }) {
  const theme = parseTheme((await cookies()).get(THEME_COOKIE)?.value);
  return (
    <html lang="en" data-theme={theme === 'system' ? undefined : theme}>
      <body>
        <AppShell theme={theme} logout={<LogoutButton className="btn btn-ghost btn-sm" />}>
          {children}
        </AppShell>
      </body>
    </html>
  );
}
