/**
 * The dashboard's pages as the navigation lists them, each with the row of the authorization
 * table (lib/auth/rules.ts) of the API it is made of: the navigation shows a page only to a
 * viewer who may call that row, and a page followed anyway by its link shows "not for your role"
 * instead (components/AppShell.tsx). Browser-safe, pure.
 */
import type { UserMe } from '../api/types';
import { may } from './permissions';

/** One page of the navigation. */
export interface DashboardPage {
  href: string;
  label: string;
  /** The table row (`METHOD pattern`) the page is made of. */
  rule: string;
  /** True when `path` is this page (or one under it). */
  matches: (path: string) => boolean;
}

const under = (base: string) => (path: string) => path === base || path.startsWith(`${base}/`);

/** Every page, in the navigation's order. */
export const PAGES: readonly DashboardPage[] = [
  { href: '/', label: 'Jobs', rule: 'GET /api/jobs', matches: (p) => p === '/' || (under('/jobs')(p) && !under('/jobs/new')(p)) },
  { href: '/jobs/new', label: 'New job', rule: 'POST /api/jobs', matches: under('/jobs/new') },
  { href: '/queues', label: 'Queues', rule: 'GET /api/queues', matches: under('/queues') },
  { href: '/schedules', label: 'Schedules', rule: 'GET /api/schedules', matches: under('/schedules') },
  { href: '/insights', label: 'Insights', rule: 'GET /api/insights', matches: under('/insights') },
  { href: '/webhooks', label: 'Webhooks', rule: 'GET /api/webhooks', matches: under('/webhooks') },
  { href: '/tokens', label: 'Tokens', rule: 'GET /api/tokens', matches: under('/tokens') },
  { href: '/users', label: 'Users', rule: 'GET /api/users', matches: under('/users') },
  { href: '/audit', label: 'Audit', rule: 'GET /api/audit', matches: under('/audit') },
];

/** The page `path` is (or is under), or null for a path the navigation does not list. */
export function pageOf(path: string): DashboardPage | null {
  return PAGES.find((p) => p.matches(path)) ?? null;
}

/** The pages the viewer may open, in order. */
export function pagesFor(me: UserMe | null | undefined): DashboardPage[] {
  return PAGES.filter((p) => may(me, p.rule));
}

/** The page at `path` when the viewer may not open it (its link was followed anyway), else null. */
export function refusedPage(me: UserMe | null | undefined, path: string): DashboardPage | null {
  const page = pageOf(path);
  return page && !may(me, page.rule) ? page : null;
}
