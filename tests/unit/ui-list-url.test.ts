import { describe, expect, it } from 'vitest';
import { groupCount, groupStatuses, listUrlQuery, parseListUrl } from '../../lib/ui/list-url';
import { isTypingTarget, matchShortcut, type Shortcut } from '../../lib/ui/shortcuts';

describe('the jobs list state in the URL', () => {
  it('round-trips filter, search, order and the paging cursors; the default view is a bare URL', () => {
    const s = { group: 'failed' as const, q: 'train #4', queue: 'gpu-2', owner: 'me' as const, sort: 'name' as const, cursors: ['c1', 'c2'] };
    expect(listUrlQuery(s)).toBe('?status=failed&q=train+%234&queue=gpu-2&owner=me&sort=name&cursor=c1&cursor=c2');
    expect(parseListUrl(listUrlQuery(s))).toEqual(s);
    expect(listUrlQuery({ group: 'all', q: '', queue: '', owner: '', sort: 'newest', cursors: [] })).toBe('');
    expect(parseListUrl('')).toEqual({ group: 'all', q: '', queue: '', owner: '', sort: 'newest', cursors: [] });
    // Whose jobs: me or all; anything else is the caller's default.
    expect(parseListUrl('?owner=all').owner).toBe('all');
    expect(parseListUrl('?owner=mia').owner).toBe('');
  });

  it("sums a chip's count from the counts of its statuses", () => {
    const counts = { total: 9, byStatus: { RUNNING: 2, PENDING: 1, FAILED: 3, FAILED_SETUP: 1, SUCCEEDED: 2 } };
    expect(['all', 'active', 'failed', 'succeeded', 'cancelled'].map((g) => groupCount(g as never, counts))).toEqual([9, 3, 4, 2, 0]);
  });

  it('unknown or oversized values fall back to the defaults', () => {
    expect(parseListUrl('?status=bogus&sort=size&cursor=&q=' + 'x'.repeat(500))).toEqual({ group: 'all', q: 'x'.repeat(200), queue: '', owner: '', sort: 'newest', cursors: [] });
    // A queue name breaking the name rule is no filter (the API would refuse it).
    for (const bad of ['GPU', 'a%20b', '-x', 'x'.repeat(64)]) expect(parseListUrl(`?queue=${bad}`).queue).toBe('');
    expect(groupStatuses('active')).toEqual(['PENDING', 'STARTING', 'RUNNING', 'RECOVERING', 'CANCELLING']);
    expect(groupStatuses('all')).toEqual([]);
  });
});

describe('single-key shortcuts', () => {
  const ran: string[] = [];
  const list: Shortcut[] = ['/', 'j', 'G', 'Enter'].map((key) => ({ key, description: key, run: () => ran.push(key) }));
  const ev = (key: string, target: unknown = { tagName: 'BODY' }, mods: Partial<{ ctrlKey: boolean; metaKey: boolean; altKey: boolean }> = {}) => ({ key, ctrlKey: false, metaKey: false, altKey: false, target: target as EventTarget, ...mods });

  it('a plain key on the page matches; with a modifier or in a field it does not', () => {
    expect(matchShortcut(ev('j'), list)?.key).toBe('j');
    expect(matchShortcut(ev('G'), list)?.key).toBe('G');
    expect(matchShortcut(ev('g'), list)).toBeNull();
    expect(matchShortcut(ev('j', undefined, { ctrlKey: true }), list)).toBeNull();
    expect(matchShortcut(ev('j', { tagName: 'INPUT', type: 'search' }), list)).toBeNull();
    expect(matchShortcut(ev('j', { tagName: 'INPUT', type: 'checkbox' }), list)?.key).toBe('j');
    expect(matchShortcut(ev('j', { tagName: 'DIV', isContentEditable: true }), list)).toBeNull();
    expect(isTypingTarget({ tagName: 'TEXTAREA' } as unknown as EventTarget)).toBe(true);
  });

  it('Enter on a focused link or button stays that control’s', () => {
    expect(matchShortcut(ev('Enter', { tagName: 'A' }), list)).toBeNull();
    expect(matchShortcut(ev('Enter', { tagName: 'BUTTON' }), list)).toBeNull();
    expect(matchShortcut(ev('Enter', { tagName: 'TR' }), list)?.key).toBe('Enter');
    // The Close button of a dialog that just closed (Escape) still has the focus for a moment:
    // Enter is the page's again, not that hidden button's.
    const inClosedDialog = { tagName: 'BUTTON', closest: (sel: string) => (sel === 'dialog:not([open])' ? {} : null) };
    expect(matchShortcut(ev('Enter', inClosedDialog), list)?.key).toBe('Enter');
    const inOpenDialog = { tagName: 'BUTTON', closest: () => null };
    expect(matchShortcut(ev('Enter', inOpenDialog), list)).toBeNull();
  });
});
