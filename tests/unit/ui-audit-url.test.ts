import { describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS as SERVER_ACTIONS } from '../../lib/store/audit';
import { AUDIT_ACTIONS, auditApiQuery, auditDetailText, auditUrlQuery, fromLocalInput, parseAuditUrl, toLocalInput } from '../../lib/ui/audit-url';

const NONE = { action: '', userId: null, since: '', until: '', befores: [] };

describe('the Audit page state in the URL', () => {
  it('offers exactly the actions the server audits', () => {
    expect([...AUDIT_ACTIONS]).toEqual([...SERVER_ACTIONS]);
  });

  it('round-trips action, user, time range and the paging steps; the unfiltered newest page is a bare URL', () => {
    const s = { action: 'user.create', userId: 3, since: '2026-01-02T03:04:05.000Z', until: '2026-01-03T00:00:00.000Z', befores: [120, 70] };
    expect(auditUrlQuery(s)).toBe('?action=user.create&user=3&since=2026-01-02T03%3A04%3A05.000Z&until=2026-01-03T00%3A00%3A00.000Z&before=120&before=70');
    expect(parseAuditUrl(auditUrlQuery(s))).toEqual(s);
    expect(auditUrlQuery(NONE)).toBe('');
    expect(parseAuditUrl('')).toEqual(NONE);
  });

  it('asks the API for the filters, the last step as `before`, and one page', () => {
    const s = { action: 'login.failed', userId: 7, since: '2026-01-02T03:04:05.000Z', until: '', befores: [120, 70] };
    expect(Object.fromEntries(new URLSearchParams(auditApiQuery(s, 25)))).toEqual({ action: 'login.failed', userId: '7', since: '2026-01-02T03:04:05.000Z', before: '70', limit: '25' });
    expect(auditApiQuery(NONE)).toBe('limit=50');
  });

  it('drops what the API would refuse: unknown actions, ids that are not positive 32-bit integers, times without an offset', () => {
    expect(parseAuditUrl('?action=user.delete&user=0&since=2026-01-02T03:04&until=yesterday&before=-1&before=x&before=2147483648')).toEqual(NONE);
    expect(parseAuditUrl('?user=2147483647&before=5&before=00').userId).toBe(2147483647);
    expect(parseAuditUrl('?before=5&before=00').befores).toEqual([5]);
    // An offset is kept as the same instant in UTC.
    expect(parseAuditUrl('?since=2026-01-02T05:04:05%2B02:00').since).toBe('2026-01-02T03:04:05.000Z');
    expect(parseAuditUrl(`?${Array.from({ length: 150 }, (_, i) => `before=${i + 1}`).join('&')}`).befores).toHaveLength(100);
  });

  it('converts between datetime-local inputs (the local zone) and ISO times', () => {
    const local = '2026-03-04T05:06';
    const iso = fromLocalInput(local);
    expect(iso).toBe(new Date(2026, 2, 4, 5, 6).toISOString());
    expect(toLocalInput(iso)).toBe(local);
    expect(fromLocalInput('')).toBe('');
    expect(fromLocalInput('2026-03-04')).toBe('');
    expect(toLocalInput('')).toBe('');
  });
});

describe("an audit row's detail in a line", () => {
  it('lists the keys of an object, strings bare and the rest as JSON, and cuts a long one', () => {
    expect(auditDetailText({ name: 'mia', changed: ['role', 'disabled'], disabled: true })).toBe('name=mia changed=["role","disabled"] disabled=true');
    expect(auditDetailText(null)).toBe('');
    expect(auditDetailText([1, 2])).toBe('[1,2]');
    const long = auditDetailText({ ids: Array.from({ length: 100 }, (_, i) => i) });
    expect(long).toHaveLength(160);
    expect(long.endsWith('…')).toBe(true);
  });
});
