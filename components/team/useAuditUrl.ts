'use client';
/**
 * The Audit page's filters (lib/ui/audit-url.ts) read from and written to the page URL with the
 * History API, which Next.js keeps in step with useSearchParams (as the jobs list's useListUrl):
 * a filter or a page is a new history entry, so Back undoes it. A filter starts again at the
 * newest page.
 */
import { useSearchParams } from 'next/navigation';
import { useCallback, useMemo } from 'react';
import { auditUrlQuery, parseAuditUrl, type AuditUrlState } from '@/lib/ui/audit-url';

export function useAuditUrl() {
  const params = useSearchParams();
  const state = useMemo(() => parseAuditUrl(params?.toString() ?? ''), [params]);
  const go = useCallback((next: AuditUrlState) => window.history.pushState(null, '', `${window.location.pathname}${auditUrlQuery(next)}`), []);
  return {
    state,
    /** Changes filters (and goes back to the newest page). */
    filter: (patch: Partial<Omit<AuditUrlState, 'befores'>>) => go({ ...state, ...patch, befores: [] }),
    clear: () => go({ action: '', userId: null, since: '', until: '', befores: [] }),
    older: (before: number) => go({ ...state, befores: [...state.befores, before] }),
    newer: () => go({ ...state, befores: state.befores.slice(0, -1) }),
  };
}
