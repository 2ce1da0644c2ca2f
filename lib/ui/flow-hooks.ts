/**
 * The dashboard's hooks of groups and schedules (docs/design.md §17, §19): their reads through
 * react-query (a live group and the schedules are read again every few seconds) and the actions,
 * each refreshing what it changed.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { GroupSummary } from '../api/types';
import { isTerminal } from '../jobs/status';
import { flowApi } from './api';

/** Whether any slot of the group is live. */
export function groupLive(g: Pick<GroupSummary, 'counts'>): boolean {
  return Object.entries(g.counts).some(([s, n]) => (n ?? 0) > 0 && !isTerminal('job', s));
}

/** A group with its slots; read again every 2 s while one of them is live. */
export function useGroup(id: number) {
  return useQuery({
    queryKey: ['groups', id],
    queryFn: ({ signal }) => flowApi.group(id, signal),
    refetchInterval: (q) => (q.state.data && groupLive(q.state.data) ? 2000 : false),
  });
}

/** Cancels every live job of a group; its row and page are read again. */
export function useCancelGroup(): (id: number) => void {
  const qc = useQueryClient();
  const m = useMutation({
    mutationFn: (id: number) => flowApi.cancelGroup(id),
    onSettled: (_r, _e, id) => {
      void qc.invalidateQueries({ queryKey: ['groups', id] });
      void qc.invalidateQueries({ queryKey: ['jobs', 'list'] });
    },
  });
  return (id: number) => m.mutate(id);
}

/** Every schedule, read again every 5 s (its next and last fires move on their own). */
export function useSchedules() {
  return useQuery({ queryKey: ['schedules'], queryFn: ({ signal }) => flowApi.schedules(signal), refetchInterval: 5000 });
}
