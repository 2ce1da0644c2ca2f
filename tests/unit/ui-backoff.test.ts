import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { backoffDelay, RESTART_MAX_MS } from '../../lib/ui/backoff';
import { defaultShouldReconnect, ReconnectingSocket, RESTART_CLOSE_CODES, RESTART_WINDOW_MS, RESTARTING_DETAIL } from '../../lib/ui/socket';
import { FakeSocket } from './ui-fake-socket';

describe('backoffDelay', () => {
  const mid = () => 0.5; // no jitter
  it('grows exponentially from the initial delay up to the cap: first retry well under 500 ms, at most 5 s', () => {
    const ds = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelay(n, {}, mid));
    expect(ds).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
  });
  it('jitter spreads ±20% and never exceeds the cap', () => {
    expect(backoffDelay(1, {}, () => 0)).toBe(200);
    expect(backoffDelay(1, {}, () => 0.999999)).toBe(300);
    expect(backoffDelay(10, {}, () => 0.999999)).toBe(5000);
  });
  it('honours custom options', () => {
    expect(backoffDelay(3, { initialMs: 100, factor: 3, maxMs: 10_000, jitter: 0 })).toBe(900);
  });
});

/** A socket over FakeSockets, recording its states and opens. */
const make = (over: Partial<ConstructorParameters<typeof ReconnectingSocket>[0]> = {}) => {
  const states: string[] = [];
  const opens: number[] = [];
  let n = 0;
  const s = new ReconnectingSocket({
    url: () => `ws://x/${n++}`,
    onMessage: () => {},
    onOpen: (k) => opens.push(k),
    onState: (st) => states.push(st),
    createSocket: (u) => new FakeSocket(u),
    random: () => 0.5,
    ...over,
  });
  return { s, states, opens };
};

describe('ReconnectingSocket', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    FakeSocket.all = [];
  });
  afterEach(() => vi.useRealTimers());

  it('reconnects after a drop with growing delays, computing the URL again each time', () => {
    const { s, states } = make();
    s.start();
    expect(FakeSocket.all).toHaveLength(1);
    FakeSocket.all[0].drop();
    expect(s.state).toBe('reconnecting');
    vi.advanceTimersByTime(249);
    expect(FakeSocket.all).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(FakeSocket.all).toHaveLength(2);
    expect(FakeSocket.all[1].url).toBe('ws://x/1');
    FakeSocket.all[1].drop();
    vi.advanceTimersByTime(499);
    expect(FakeSocket.all).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(FakeSocket.all).toHaveLength(3);
    expect(states).toContain('reconnecting');
    s.stop();
  });

  it('a connection that delivered a message resets the backoff', () => {
    const { s, opens } = make();
    s.start();
    FakeSocket.all[0].drop();
    vi.advanceTimersByTime(500);
    FakeSocket.all[1].drop();
    vi.advanceTimersByTime(1000);
    const third = FakeSocket.all[2];
    third.open();
    third.message('hello');
    expect(s.failures).toBe(0);
    third.drop();
    vi.advanceTimersByTime(500);
    expect(FakeSocket.all).toHaveLength(4);
    FakeSocket.all[3].open();
    expect(opens).toEqual([0, 1]);
    s.stop();
  });

  it('does not reconnect after a normal close or an application refusal, but does after 4408', () => {
    expect(defaultShouldReconnect(1000)).toBe(false);
    expect(defaultShouldReconnect(4401)).toBe(false);
    expect(defaultShouldReconnect(4404)).toBe(false);
    expect(defaultShouldReconnect(4408)).toBe(true);
    expect(defaultShouldReconnect(1006)).toBe(true);
    expect(defaultShouldReconnect(1001)).toBe(true);
    const { s } = make();
    s.start();
    FakeSocket.all[0].open();
    FakeSocket.all[0].drop(4401, 'unauthorized');
    expect(s.state).toBe('failed');
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.all).toHaveLength(1);
  });

  it('stop() cancels a pending retry and closes the socket', () => {
    const { s } = make();
    s.start();
    FakeSocket.all[0].drop();
    s.stop();
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.all).toHaveLength(1);
    expect(s.state).toBe('closed');
  });

  it('reconnectNow() skips the wait', () => {
    const { s } = make();
    s.start();
    FakeSocket.all[0].drop();
    s.reconnectNow();
    expect(FakeSocket.all).toHaveLength(2);
    s.stop();
  });
});

describe('ReconnectingSocket after the server said it is restarting', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    FakeSocket.all = [];
  });
  afterEach(() => vi.useRealTimers());

  it('a server that closed with 1001 / 1012 is retried at most every second, told as a restart, until it answers', () => {
    for (const code of RESTART_CLOSE_CODES) {
      FakeSocket.all = [];
      const infos: { detail: string | null; restarting: boolean; nextRetryAt: number | null }[] = [];
      let t = 0;
      const { s } = make({ onState: (_st, info) => infos.push(info), now: () => t });
      s.start();
      FakeSocket.all[0].open();
      FakeSocket.all[0].message('hello');
      FakeSocket.all[0].drop(code, 'server stopping');
      const waits: number[] = [];
      for (let i = 1; i <= 8; i++) {
        const wait = infos.at(-1)!.nextRetryAt! - t;
        waits.push(wait);
        expect(infos.at(-1)).toMatchObject({ restarting: true, detail: RESTARTING_DETAIL });
        t += wait;
        vi.advanceTimersByTime(wait);
        expect(FakeSocket.all).toHaveLength(i + 1);
        FakeSocket.all.at(-1)!.drop(1006, ''); // refused while it is down
      }
      expect(waits[0]).toBeLessThan(500);
      expect(Math.max(...waits)).toBe(RESTART_MAX_MS);
      // The new server accepts the connection: live, the notice is gone.
      vi.runOnlyPendingTimers();
      FakeSocket.all.at(-1)!.open();
      expect(s.restarting).toBe(false);
      expect(infos.at(-1)).toMatchObject({ restarting: false });
      s.stop();
    }
  });

  it('a going_away notice before a plain drop counts as a restart too; the notice lapses after RESTART_WINDOW_MS', () => {
    let t = 0;
    const infos: { detail: string | null; restarting: boolean }[] = [];
    const { s } = make({ onState: (_st, info) => infos.push(info), now: () => t });
    s.start();
    FakeSocket.all[0].open();
    FakeSocket.all[0].message('hello');
    s.serverRestarting();
    FakeSocket.all[0].drop(1006, '');
    expect(infos.at(-1)).toMatchObject({ restarting: true, detail: RESTARTING_DETAIL });
    t = RESTART_WINDOW_MS;
    vi.runOnlyPendingTimers();
    FakeSocket.all.at(-1)!.drop(1006, '');
    expect(infos.at(-1)).toMatchObject({ restarting: false, detail: 'connection closed (1006)' });
    s.stop();
  });
});
