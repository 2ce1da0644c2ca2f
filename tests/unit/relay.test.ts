import { describe, expect, it } from 'vitest';
import { decodeNotification, encodeNotifications } from '../../lib/server/relay';

describe('NOTIFY payloads of the relay (lib/server/relay.ts)', () => {
  it('round-trips items in order, splitting under the 8000-byte limit', () => {
    const items = Array.from({ length: 2000 }, (_, i) => ({ kind: i % 7 === 0 ? ('created' as const) : ('event' as const), jobId: 1_000_000 + i, eventId: i % 7 === 0 ? 0 : 5_000_000 + i }));
    const payloads = encodeNotifications('srv-host-abcd1234', [...items, { kind: 'updated', jobId: 3, eventId: 0, changed: 'priority' }]);
    expect(payloads.length).toBeGreaterThan(1);
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThan(8000);
    const back = payloads.map((p) => decodeNotification(p)!);
    expect(new Set(back.map((b) => b.sender))).toEqual(new Set(['srv-host-abcd1234']));
    expect(back.flatMap((b) => b.items)).toEqual([...items, { kind: 'updated', jobId: 3, eventId: 0, changed: 'priority' }]);
  });

  it('carries every kind of the store bus, the webhook outbox wake-up among them', () => {
    const kinds = ['event', 'created', 'deleted', 'cancel-requested', 'updated', 'queues', 'outbox'] as const;
    const items = kinds.map((kind, i) => ({ kind, jobId: i, eventId: kind === 'event' ? 10 + i : 0 }));
    const back = encodeNotifications('srv', items).map((p) => decodeNotification(p));
    expect(back.every((b) => b !== null)).toBe(true);
    expect(back.flatMap((b) => b!.items)).toEqual(items);
  });

  it('refuses a payload that is not one of its own (another program on the channel)', () => {
    for (const p of ['', 'hello', '|0:1:2', 'srv|9:1:2', 'srv|0:x:2', 'srv|0:1']) expect(decodeNotification(p)).toBeNull();
  });
});
