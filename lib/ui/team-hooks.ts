/**
 * react-query hooks of the team pages (docs/design.md §15): who is signed in, the users (admins),
 * and the changes an admin makes to them — each change reads the users again. Client components only.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { UserMe } from '../api/types';
import { ApiRequestError, teamApi } from './api';
import type { UserBody } from './user-form';

/** Query key of GET /api/users. */
const USERS_KEY = ['users'] as const;

/** Query key of GET /api/users/me (seeded with the server render's answer: components/Providers.tsx). */
export const ME_KEY = ['me'] as const;

/** The signed-in user (GET /api/users/me) and what it may call, shared by the nav and every page. */
export function useMe() {
  return useQuery({ queryKey: ME_KEY, queryFn: ({ signal }) => teamApi.me(signal), staleTime: 60_000 });
}

/**
 * The viewer (GET /api/users/me) for drawing controls (lib/ui/permissions.ts may()): the server
 * render's answer from the first render on, so the server's HTML and the browser's first render
 * agree; null only outside a signed-in page.
 */
export function useViewer(): UserMe | null {
  return useMe().data ?? null;
}

/** Every user (GET /api/users); a member's or viewer's 403 is not retried. */
export function useUsers(enabled = true) {
  return useQuery({ queryKey: USERS_KEY, queryFn: ({ signal }) => teamApi.users(signal), enabled, retry: (n, err) => !(err instanceof ApiRequestError && err.status < 500) && n < 2 });
}

/** Creates a user (`id` null) or changes user `id`, then reads the users again. */
export function useSaveUser() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (v: { id: number | null; body: UserBody }) => (v.id === null ? teamApi.createUser(v.body) : teamApi.patchUser(v.id, v.body)),
    onSuccess: () => void qc.invalidateQueries({ queryKey: USERS_KEY }),
  });
}
