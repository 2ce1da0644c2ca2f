/**
 * The dashboard's reading of the viewer's rows (lib/ui/permissions.ts, lib/ui/pages.ts): a
 * control for a row the viewer lacks is not drawn, an `own` row holds for the viewer's own jobs
 * only, and the navigation lists the pages whose API the role may call — from the answers the
 * server gives (lib/auth/rules.ts permissionsOf), not from a copy of the rules.
 */
import { describe, expect, it } from 'vitest';
import type { UserMe } from '../../lib/api/types';
import { permissionsOf } from '../../lib/auth/rules';
import type { Role } from '../../lib/jobs/roles';
import { PAGES, pageOf, pagesFor, refusedPage } from '../../lib/ui/pages';
import { jobPermissions, may, mayChangeAny, reachOf } from '../../lib/ui/permissions';

const viewer = (role: Role, name = 'mia'): UserMe => ({ id: 2, name, role, tokenPrefix: null, maxPriority: null, may: permissionsOf(role) });

describe('may', () => {
  it('is false without a viewer and for a row the viewer lacks', () => {
    expect(may(null, 'GET /api/jobs')).toBe(false);
    expect(may(viewer('member'), 'PUT /api/queues/[name]')).toBe(false);
    expect(may(viewer('admin'), 'PUT /api/queues/[name]')).toBe(true);
  });

  it('holds an own row to the viewer’s own jobs (by submitter name); a job without one is an admin’s', () => {
    const m = viewer('member', 'mia');
    expect(may(m, 'POST /api/jobs/[id]/cancel', 'mia')).toBe(true);
    expect(may(m, 'POST /api/jobs/[id]/cancel', 'bob')).toBe(false);
    expect(may(m, 'POST /api/jobs/[id]/cancel', null)).toBe(false);
    expect(may(m, 'POST /api/jobs/[id]/cancel')).toBe(true);
    expect(may(viewer('admin', 'root'), 'POST /api/jobs/[id]/cancel', 'mia')).toBe(true);
    expect(may(viewer('admin', 'root'), 'DELETE /api/jobs/[id]', null)).toBe(true);
    expect(jobPermissions(viewer('viewer'), 'mia')).toEqual({ cancel: false, rerun: false, remove: false, priority: false });
    expect(mayChangeAny(jobPermissions(m, 'mia'))).toBe(true);
    expect(mayChangeAny(jobPermissions(m, 'bob'))).toBe(false);
  });

  it('tells the reach of a row', () => {
    expect(reachOf(viewer('member'), 'GET /api/tokens')).toBe('own');
    expect(reachOf(viewer('admin'), 'GET /api/tokens')).toBe('any');
    expect(reachOf(viewer('viewer'), 'POST /api/jobs')).toBeNull();
  });
});

describe('pages', () => {
  it('lists for each role the pages of the API it may call', () => {
    const labels = (role: Role) => pagesFor(viewer(role)).map((p) => p.label);
    expect(labels('admin')).toEqual(['Jobs', 'New job', 'Queues', 'Schedules', 'Insights', 'Webhooks', 'Tokens', 'Users', 'Audit']);
    expect(labels('member')).toEqual(['Jobs', 'New job', 'Queues', 'Schedules', 'Insights', 'Tokens']);
    expect(labels('viewer')).toEqual(['Jobs', 'Queues', 'Schedules', 'Insights', 'Tokens']);
  });

  it('finds the page of a path and refuses the ones the role lacks', () => {
    expect(pageOf('/')?.label).toBe('Jobs');
    expect(pageOf('/jobs/12')?.label).toBe('Jobs');
    expect(pageOf('/jobs/new')?.label).toBe('New job');
    expect(pageOf('/audit')?.label).toBe('Audit');
    expect(pageOf('/nowhere')).toBeNull();
    expect(refusedPage(viewer('member'), '/webhooks')?.label).toBe('Webhooks');
    expect(refusedPage(viewer('member'), '/jobs/12')).toBeNull();
    expect(refusedPage(viewer('viewer'), '/jobs/new')?.label).toBe('New job');
    expect(refusedPage(viewer('admin'), '/audit')).toBeNull();
  });

  it('names a row of the table for every page', () => {
    const rows = Object.keys(permissionsOf('admin'));
    for (const p of PAGES) expect(rows, p.label).toContain(p.rule);
  });
});
