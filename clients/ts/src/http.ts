/**
 * The client's HTTP transport: `Authorization: Bearer <token>` on every request, every failure
 * a typed error (errors.ts), the retry rules of docs/cli.md "Dropped connections".
 *
 * A connection that drops — before the answer, or while its body is read (undici's
 * `TypeError: terminated`) — is a connection failure like a refused one. An idempotent request
 * (GET; a submit with a submissionId, Ray's idempotency key) is then sent again with the
 * backoff (backoff.ts: 250 ms doubling to 5 s) until `retryTimeoutMs`; a 502, 503 or 504 (a
 * proxy, a server stopping) is retried the same way. Other requests are never sent twice: the
 * error says the server may or may not have applied it. Only a refusal on the very first try
 * fails at once (nobody listens there).
 */
import { backoffDelay } from './backoff';
import { errorForAnswer, readAnswer, ServerError, UnreachableError, type Answer } from './errors';
import { failureCause, isUnreachable } from './stream';

/** Options of the transport (JobdeckClient's). */
export interface HttpOptions {
  /** Keep retrying an idempotent request this long after its first failure (ms; default 60 000). */
  retryTimeoutMs?: number;
  /** Waits between retries (ms); tests pass a fake. */
  sleep?: (ms: number) => Promise<void>;
  /** Told before each retry (the CLI prints a notice). */
  onRetry?: (r: { what: string; attempt: number; delayMs: number; cause: string }) => void;
  /** The clock (ms) for the retry budget; tests pass a fake. */
  now?: () => number;
}

/** Options of one request. */
export interface RequestOptions {
  /** A JSON body. */
  body?: unknown;
  /** Names the request in errors ("submit", "job 7"). */
  what?: string;
  query?: URLSearchParams;
  /** Safe to send again when the connection drops (default: GET only). */
  idempotent?: boolean;
}

/** HTTP statuses an idempotent request is retried on (a proxy or a stopping server answers them). */
const RETRY_STATUSES = new Set([502, 503, 504]);

type Failure = { kind: 'refused' | 'dropped'; cause: string; answer?: Answer };

/** See the module comment. */
export class Http {
  constructor(
    readonly url: string,
    readonly token: string | undefined,
    /** Said first when the server refuses the token. */
    readonly tokenHint: string,
    private readonly opts: HttpOptions = {},
  ) {}

  /** Headers every request carries. */
  authHeaders(): Record<string, string> {
    return this.token ? { authorization: `Bearer ${this.token}` } : {};
  }

  /**
   * Sends a request; answers the HTTP status and the parsed JSON body (undefined for 204).
   * @throws UnreachableError (refused; dropped and not retried — `lost`; retries spent — `gave-up`),
   *   the answer's error class (errors.ts errorForAnswer), ServerError for an answer that is not JSON.
   */
  async send<T>(method: string, pathname: string, opts: RequestOptions = {}): Promise<{ status: number; body: T }> {
    const url = new URL(this.url + pathname);
    if (opts.query) url.search = opts.query.toString();
    const what = opts.what ?? `${method} ${url.pathname}`;
    const idempotent = opts.idempotent ?? method === 'GET';
    const timeout = this.opts.retryTimeoutMs ?? 60_000;
    const now = this.opts.now ?? Date.now;
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    let firstFailure: number | null = null;
    for (let attempt = 1; ; attempt++) {
      const r = await this.once(method, url, opts.body, what);
      if (!('kind' in r)) return this.parse<T>(method, url, r);
      // A refusal at the first try: nobody listens there. Later (a server restarting), keep trying.
      if (r.kind === 'refused' && attempt === 1) throw new UnreachableError(`cannot reach jobdeck at ${this.url} (${r.cause})`, what, this.url, 'refused', r.cause);
      if (!idempotent) {
        if (r.answer) throw errorForAnswer(r.answer, what, this.tokenHint);
        throw new UnreachableError(`lost the connection to jobdeck at ${this.url} before its answer to ${what} (${r.cause}); the server may or may not have done it`, what, this.url, 'lost', r.cause);
      }
      firstFailure ??= now();
      const delayMs = backoffDelay(attempt);
      if (now() + delayMs - firstFailure > timeout) {
        if (r.answer) throw errorForAnswer(r.answer, what, this.tokenHint);
        const elapsed = now() - firstFailure;
        throw new UnreachableError(`cannot reach jobdeck at ${this.url} (${r.cause}) — gave up after ${Math.round(elapsed / 1000)} s of retries`, what, this.url, 'gave-up', r.cause, elapsed);
      }
      this.opts.onRetry?.({ what, attempt, delayMs, cause: r.cause });
      await sleep(delayMs);
    }
  }

  /** One try: the answer with its whole body read, or how the connection failed. */
  private async once(method: string, url: URL, payload: unknown, what: string): Promise<{ status: number; text: string } | Failure> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.authHeaders() };
    let body: string | undefined;
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(payload);
    }
    let res: Response;
    try {
      res = await fetch(url, { method, headers, body });
    } catch (err) {
      return { kind: isUnreachable(err) ? 'refused' : 'dropped', cause: failureCause(err) };
    }
    // The body is part of the answer: a connection cut while it is read is a dropped connection.
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      return { kind: 'dropped', cause: failureCause(err) };
    }
    if (RETRY_STATUSES.has(res.status)) return { kind: 'dropped', cause: `HTTP ${res.status}`, answer: readAnswer(res.status, res.statusText, text) };
    if (!res.ok) throw errorForAnswer(readAnswer(res.status, res.statusText, text), what, this.tokenHint);
    return { status: res.status, text };
  }

  private parse<T>(method: string, url: URL, r: { status: number; text: string }): { status: number; body: T } {
    if (r.status === 204) return { status: 204, body: undefined as T };
    try {
      return { status: r.status, body: (r.text ? JSON.parse(r.text) : undefined) as T };
    } catch {
      throw new ServerError(`${method} ${url.pathname}: the server answered something that is not JSON (is ${this.url} a jobdeck server?)`, `${method} ${url.pathname}`);
    }
  }

  /**
   * POSTs raw bytes (an upload). Not retried unless `idempotent` (an upload is stored by its
   * content hash, so the client's own submit sends it again safely; the CLI does not).
   * @throws UnreachableError, or the answer's error class (413 over the server's limit).
   */
  async postBytes<T>(pathname: string, bytes: Uint8Array<ArrayBuffer>, contentType: string, what: string): Promise<T> {
    const url = new URL(this.url + pathname);
    let res: Response;
    try {
      res = await fetch(url, { method: 'POST', headers: { accept: 'application/json', 'content-type': contentType, ...this.authHeaders() }, body: bytes });
    } catch (err) {
      throw new UnreachableError(`cannot reach jobdeck at ${this.url} (${failureCause(err)}) while sending ${what}`, what, this.url, isUnreachable(err) ? 'refused' : 'lost', failureCause(err));
    }
    const text = await res.text();
    if (!res.ok) throw errorForAnswer(readAnswer(res.status, res.statusText, text), what, this.tokenHint);
    return this.parse<T>('POST', url, { status: res.status, text }).body;
  }

  /**
   * GETs `pathname` and writes its body to `out` as it arrives (waiting for 'drain' when `out` is
   * full), never holding it whole. Not retried (bytes may have been written).
   * @throws UnreachableError (`refused`, or `cut`: the output is incomplete), the answer's error class.
   */
  async download(pathname: string, out: { write(chunk: Uint8Array): boolean; once(event: 'drain', cb: () => void): unknown }): Promise<void> {
    const url = new URL(this.url + pathname);
    const what = `GET ${url.pathname}`;
    let res: Response;
    try {
      res = await fetch(url, { headers: this.authHeaders() });
    } catch (err) {
      throw new UnreachableError(`cannot reach jobdeck at ${this.url} (${failureCause(err)})`, what, this.url, 'refused', failureCause(err));
    }
    if (!res.ok || !res.body) throw errorForAnswer(readAnswer(res.status, res.statusText, await res.text().catch(() => '')), what, this.tokenHint);
    try {
      for await (const chunk of res.body) {
        if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', r));
      }
    } catch (err) {
      throw new UnreachableError(`lost the connection to jobdeck at ${this.url} during ${what} (${failureCause(err)}); the output is incomplete`, what, this.url, 'cut', failureCause(err));
    }
  }
}
