/**
 * The webhook dispatcher's settings (docs/design.md §10 "Webhooks"), from the environment (read
 * at start; every value has a default).
 *
 * - `JOBDECK_WEBHOOKS` (1): `0` runs no dispatcher in this server (rows still accumulate).
 * - `JOBDECK_WEBHOOK_ALLOW_PRIVATE` (0): `1` allows loopback, private, link-local and other
 *   non-public addresses (tests, a receiver on the same host); otherwise they are refused.
 * - `JOBDECK_WEBHOOK_TIMEOUT_MS` (10 000): one request's limit, connect to response head.
 * - `JOBDECK_WEBHOOK_CONCURRENCY` (16): requests in flight at once per server.
 * - `JOBDECK_WEBHOOK_LEASE_MS` (60 000): a claim's lease; a row claimed by a server that died is
 *   due again once it expires. Longer than the timeout, so a live claim never expires mid-send.
 * - `JOBDECK_WEBHOOK_RETRY_BASE_MS` (5 000) and `JOBDECK_WEBHOOK_RETRY_MAX_MS` (3 600 000): the
 *   backoff of try n is a uniformly random delay in [0, min(max, base · 2^(n−1))] (full jitter).
 * - `JOBDECK_WEBHOOK_RETRY_WINDOW_MS` (86 400 000): tries stop after this long; the delivery is
 *   then `failed` and its subscription disabled.
 * - `JOBDECK_PUBLIC_URL` (none): the dashboard's address, for the job link of the Slack format.
 */
export interface WebhookSettings {
  enabled: boolean;
  allowPrivate: boolean;
  timeoutMs: number;
  concurrency: number;
  leaseMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  retryWindowMs: number;
  publicUrl: string | null;
}

type Env = Readonly<Record<string, string | undefined>>;

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name}: expected an integer in [${min}, ${max}], got "${raw}"`);
  return n;
}

function flag(env: Env, name: string, def: boolean): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '') return def;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new Error(`${name}: expected 0 or 1, got "${env[name]}"`);
}

/** Whether non-public addresses are allowed (`JOBDECK_WEBHOOK_ALLOW_PRIVATE`). */
export function allowPrivateFromEnv(env: Env = process.env): boolean {
  return flag(env, 'JOBDECK_WEBHOOK_ALLOW_PRIVATE', false);
}

/**
 * Reads the settings (see the module comment).
 * @throws Error naming the variable when a value is malformed.
 */
export function webhookSettingsFromEnv(env: Env = process.env): WebhookSettings {
  const timeoutMs = int(env, 'JOBDECK_WEBHOOK_TIMEOUT_MS', 10_000, 100, 600_000);
  const pub = (env.JOBDECK_PUBLIC_URL ?? '').trim();
  if (pub && !/^https?:\/\/[^\s]+$/.test(pub)) throw new Error(`JOBDECK_PUBLIC_URL: expected an http(s) URL, got "${pub}"`);
  return {
    enabled: flag(env, 'JOBDECK_WEBHOOKS', true),
    allowPrivate: allowPrivateFromEnv(env),
    timeoutMs,
    concurrency: int(env, 'JOBDECK_WEBHOOK_CONCURRENCY', 16, 1, 256),
    leaseMs: int(env, 'JOBDECK_WEBHOOK_LEASE_MS', Math.max(60_000, timeoutMs * 3), timeoutMs * 2, 86_400_000),
    retryBaseMs: int(env, 'JOBDECK_WEBHOOK_RETRY_BASE_MS', 5_000, 1, 86_400_000),
    retryMaxMs: int(env, 'JOBDECK_WEBHOOK_RETRY_MAX_MS', 3_600_000, 1, 86_400_000),
    retryWindowMs: int(env, 'JOBDECK_WEBHOOK_RETRY_WINDOW_MS', 86_400_000, 1, 30 * 86_400_000),
    publicUrl: pub ? pub.replace(/\/+$/, '') : null,
  };
}

/**
 * The delay before try `n + 1` after `n` failed tries (ms): full jitter, uniformly random in
 * [0, min(max, base · 2^(n−1))] (AWS's "exponential backoff and jitter").
 */
export function retryDelayMs(s: Pick<WebhookSettings, 'retryBaseMs' | 'retryMaxMs'>, n: number, random: () => number = Math.random): number {
  const cap = Math.min(s.retryMaxMs, s.retryBaseMs * 2 ** Math.min(Math.max(n - 1, 0), 40));
  return Math.floor(random() * cap);
}
