'use client';
/**
 * Client-side providers for every page: the react-query cache (server data) and the list
 * stream `/ws/jobs` that keeps it live. The cache starts with the viewer the server rendered the
 * page for (GET /api/users/me's answer), so every role-dependent part draws the same on the
 * server and in the browser's first render — a hydration mismatch otherwise, whenever the
 * browser's own /api/users/me answered before a Suspense boundary (the jobs list) hydrated.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import type { UserMe } from '@/lib/api/types';
import { useListStream } from '@/lib/ui/hooks';
import { ME_KEY } from '@/lib/ui/team-hooks';

function ListStream() {
  useListStream();
  return null;
}

export function Providers({ viewer, children }: { viewer: UserMe | null; children: ReactNode }) {
  const [client] = useState(() => {
    const qc = new QueryClient({
      defaultOptions: {
        // WebSocket pushes keep the cache fresh; no refetch loops.
        queries: { staleTime: 60_000, refetchOnWindowFocus: false, retry: 1 },
      },
    });
    if (viewer) qc.setQueryData(ME_KEY, viewer);
    return qc;
  });
  return (
    <QueryClientProvider client={client}>
      <ListStream />
      {children}
    </QueryClientProvider>
  );
}
