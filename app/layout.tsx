import type { ReactNode } from 'react';

export const metadata = { title: 'jobdeck', description: 'Managed jobs: run, watch, retry, recover.' };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
