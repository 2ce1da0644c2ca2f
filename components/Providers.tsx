'use client';
/**
 * Client-side providers for every page: the react-query cache (server data) and the list
 * stream `/ws/jobs` that keeps it live.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { useListStream } from '@/lib/ui/hooks';

function ListStream() {
  useListStream();
  return null;
}

export function Providers({ children }: { children: ReactNode }) {
  const [client] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          // WebSocket pushes keep the cache fresh; no refetch loops.
          queries: { staleTime: 60_000, refetchOnWindowFocus: false, retry: 1 },
        },
      }),
  );
  return (
    <QueryClientProvider client={client}>
      <ListStream />
      {children}
    </QueryClientProvider>
  );
}
