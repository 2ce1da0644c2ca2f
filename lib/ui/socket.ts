/**
 * A WebSocket that reconnects by itself with exponential backoff (lib/ui/backoff.ts). The URL is
 * computed again for every connection, so a job stream can put its resume position in it.
 * A server that said it is restarting — close 1001 ("going away") or 1012 ("service restart"),
 * or a job stream's `going_away` message (`serverRestarting()`) — is retried with delays capped
 * at RESTART_MAX_MS until a connection opens again (for RESTART_WINDOW_MS at most),
 * and the state's detail says so instead of a close code.
 * Browser-safe; the socket constructor and timers are injectable so the policy is tested in
 * vitest without a browser or a server.
 */
import { backoffDelay, RESTART_MAX_MS, type BackoffOptions } from './backoff';
import type { ConnectionState } from './connection';

/** The part of the WebSocket API this module uses (the browser's WebSocket fits). */
export interface SocketLike {
  binaryType: string;
  readonly readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  close(code?: number, reason?: string): void;
}

/** Options of a ReconnectingSocket. */
export interface ReconnectingSocketOptions {
  /** Called before each connection (first and every retry). */
  url: () => string;
  /** A text frame (string) or a binary frame (ArrayBuffer). */
  onMessage: (data: string | ArrayBuffer) => void;
  /** Called on each successful open, with 0 for the first connection and n for the n-th reconnect. */
  onOpen?: (reconnects: number) => void;
  /** State changes (for the connection indicator). */
  onState?: (state: ConnectionState, info: SocketStateInfo) => void;
  /**
   * After a close: true to reconnect. Default: reconnect unless the code is 1000 (normal end)
   * or an application refusal 4400–4499 (bad request, unauthorized, not found).
   */
  shouldReconnect?: (code: number, reason: string) => boolean;
  backoff?: Partial<BackoffOptions>;
  /** Defaults to `new WebSocket(url)`. */
  createSocket?: (url: string) => SocketLike;
  /** Injectable for tests (defaults: Math.random, Date.now). */
  random?: () => number;
  now?: () => number;
}

/** What comes with a state change. */
export interface SocketStateInfo {
  /** When reconnecting: ms epoch of the next try. */
  nextRetryAt: number | null;
  /** Why it is not live (a close reason or code), or the restart notice. */
  detail: string | null;
  /** The server said it is restarting and has not answered since. */
  restarting: boolean;
}

/** WebSocket close codes that mean "the server is restarting" (RFC 6455: 1001 going away, 1012 service restart). */
export const RESTART_CLOSE_CODES: readonly number[] = [1001, 1012];
/** How long a restart notice keeps the low backoff cap before the usual backoff returns (ms). */
export const RESTART_WINDOW_MS = 5 * 60_000;
/** The detail shown while the server restarts. */
export const RESTARTING_DETAIL = 'server restarting — reconnecting…';

/** Default reconnect rule; see ReconnectingSocketOptions.shouldReconnect. */
export function defaultShouldReconnect(code: number): boolean {
  if (code === 1000) return false;
  // 4408 (slow consumer) is an invitation to resume; the other 44xx refuse for good.
  if (code >= 4400 && code < 4500) return code === 4408;
  return true;
}

/** A self-reconnecting WebSocket; see the module comment. */
export class ReconnectingSocket {
  state: ConnectionState = 'closed';
  /** Consecutive failed connections (reset by the first message of a connection). */
  failures = 0;
  /** Successful opens after the first. */
  reconnects = 0;
  lastClose: { code: number; reason: string } | null = null;
  /** ms epoch of the server's restart notice, while it has not answered since; else null. */
  private restartingSince: number | null = null;
  private socket: SocketLike | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private opened = 0;
  private stopped = true;
  private gotMessage = false;

  constructor(private readonly opts: ReconnectingSocketOptions) {}

  /** Opens the first connection. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  /** Closes for good (no reconnect). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const s = this.socket;
    this.socket = null;
    if (s) {
      s.onclose = s.onmessage = s.onerror = s.onopen = null;
      try {
        s.close(1000, 'client done');
      } catch {
        /* already closed */
      }
    }
    this.setState('closed');
  }

  /** Skips the wait of a pending retry (e.g. the browser came back online). */
  reconnectNow(): void {
    if (this.stopped || this.state !== 'reconnecting') return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.connect();
  }

  /** True while the server said it is restarting (and not for longer than RESTART_WINDOW_MS). */
  get restarting(): boolean {
    return this.restartingSince !== null && this.now() - this.restartingSince < RESTART_WINDOW_MS;
  }

  /** The server announced it is stopping to restart (a `going_away` message): retry soon. */
  serverRestarting(): void {
    this.restartingSince ??= this.now();
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private setState(state: ConnectionState, nextRetryAt: number | null = null, detail: string | null = null): void {
    this.state = state;
    this.opts.onState?.(state, { nextRetryAt, detail, restarting: this.restarting });
  }

  private connect(): void {
    const create = this.opts.createSocket ?? ((u: string) => new WebSocket(u) as unknown as SocketLike);
    this.gotMessage = false;
    if (this.state !== 'reconnecting') this.setState('connecting');
    let s: SocketLike;
    try {
      s = create(this.opts.url());
    } catch (err) {
      this.scheduleRetry(String(err));
      return;
    }
    this.socket = s;
    s.binaryType = 'arraybuffer';
    s.onopen = () => {
      if (this.socket !== s) return;
      // A server that accepts the connection is back (a stopping one refuses upgrades).
      this.restartingSince = null;
      this.setState('live');
      this.opts.onOpen?.(this.opened++ === 0 ? 0 : ++this.reconnects);
    };
    s.onmessage = (ev) => {
      if (this.socket !== s) return;
      if (!this.gotMessage) {
        this.gotMessage = true;
        this.failures = 0;
      }
      const d = ev.data;
      this.opts.onMessage(typeof d === 'string' ? d : (d as ArrayBuffer));
    };
    s.onerror = () => {
      /* onclose follows and decides */
    };
    s.onclose = (ev) => {
      if (this.socket !== s) return;
      this.socket = null;
      this.lastClose = { code: ev.code, reason: ev.reason };
      if (this.stopped) return;
      if (RESTART_CLOSE_CODES.includes(ev.code)) this.serverRestarting();
      const again = (this.opts.shouldReconnect ?? defaultShouldReconnect)(ev.code, ev.reason);
      if (!again) {
        if (ev.code === 1000) this.setState('closed');
        else this.setState('failed', null, ev.reason || `closed with code ${ev.code}`);
        this.stopped = true;
        return;
      }
      this.scheduleRetry(ev.reason || `connection closed (${ev.code})`);
    };
  }

  private scheduleRetry(detail: string): void {
    this.failures++;
    const restarting = this.restarting;
    const backoff = restarting ? { ...this.opts.backoff, maxMs: Math.min(this.opts.backoff?.maxMs ?? RESTART_MAX_MS, RESTART_MAX_MS) } : this.opts.backoff;
    const delay = backoffDelay(this.failures, backoff, this.opts.random);
    this.setState('reconnecting', this.now() + delay, restarting ? RESTARTING_DETAIL : detail);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.stopped) this.connect();
    }, delay);
  }
}
