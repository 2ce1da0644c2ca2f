/**
 * The webhook dispatcher's settings (docs/design.md §10 "Webhooks"), read at start from the
 * environment through lib/config.ts (each variable's bounds, default and meaning are in its
 * table, and in the README's): JOBDECK_WEBHOOKS, JOBDECK_WEBHOOK_ALLOW_PRIVATE, the request
 * timeout and concurrency, the claim's lease (at least twice the timeout, so a live claim never
 * expires mid-send), the retry backoff and window, and JOBDECK_PUBLIC_URL.
 */
import { ConfigError, setting, type Env } from '../../config';

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

/** Whether non-public addresses are allowed (`JOBDECK_WEBHOOK_ALLOW_PRIVATE`). */
export function allowPrivateFromEnv(env: Env = process.env): boolean {
  return setting('JOBDECK_WEBHOOK_ALLOW_PRIVATE', env);
}

/**
 * Reads the settings (see the module comment).
 * @throws ConfigError naming the variable when a value is malformed.
 */
export function webhookSettingsFromEnv(env: Env = process.env): WebhookSettings {
  const timeoutMs = setting('JOBDECK_WEBHOOK_TIMEOUT_MS', env);
  const leaseMs = setting('JOBDECK_WEBHOOK_LEASE_MS', env) ?? Math.max(60_000, timeoutMs * 3);
  if (leaseMs < timeoutMs * 2) throw new ConfigError(`JOBDECK_WEBHOOK_LEASE_MS: expected at least twice JOBDECK_WEBHOOK_TIMEOUT_MS (${timeoutMs * 2}), got "${leaseMs}"`);
  return {
    enabled: setting('JOBDECK_WEBHOOKS', env),
    allowPrivate: allowPrivateFromEnv(env),
    timeoutMs,
    concurrency: setting('JOBDECK_WEBHOOK_CONCURRENCY', env),
    leaseMs,
    retryBaseMs: setting('JOBDECK_WEBHOOK_RETRY_BASE_MS', env),
    retryMaxMs: setting('JOBDECK_WEBHOOK_RETRY_MAX_MS', env),
    retryWindowMs: setting('JOBDECK_WEBHOOK_RETRY_WINDOW_MS', env),
    publicUrl: setting('JOBDECK_PUBLIC_URL', env),
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
