import { ruleKeyFor } from '../auth/rules';
import { uploadMaxBytes } from '../control';
import { MAX_BODY_BYTES } from './body';

/**
 * The largest request body each route takes — the ONE table (SECURITY.md "Limits"). Rows are
 * keyed like the authorization table (lib/auth/rules.ts `METHOD pattern`); a route without a row
 * takes {@link MAX_BODY_BYTES} (1 MiB). A row is a number of bytes, or the name of a setting
 * the operator chooses (`upload`: JOBDECK_UPLOAD_MAX_BYTES, default 100 MiB). The HTTP gate
 * (lib/auth/gate.ts, by Content-Length, before a byte is read) and apiRoute() (lib/api/handler.ts,
 * while the body streams) both read it through bodyLimitFor(), so they never disagree.
 */

/** Body limits an operator sets (read once at start). */
export interface BodyLimitSettings {
  /** POST /api/uploads: the compressed archive (JOBDECK_UPLOAD_MAX_BYTES), bytes. */
  uploadMaxBytes: number;
}

/**
 * The operator's body limits from the environment (JOBDECK_UPLOAD_MAX_BYTES).
 * @throws Error naming the variable when it is malformed (a start refuses it).
 */
export function bodyLimitSettings(env: Record<string, string | undefined> = process.env): BodyLimitSettings {
  return { uploadMaxBytes: uploadMaxBytes(env) };
}

/** One row: bytes, or the setting that holds them. */
type BodyLimit = number | keyof BodyLimitSettings;

/** Largest login form or JSON (bytes): a name and a password, or a token. */
export const MAX_LOGIN_BODY_BYTES = 16 * 1024;

/** `METHOD pattern` → the route's body limit; every other route: MAX_BODY_BYTES. */
export const BODY_LIMITS: Readonly<Record<string, BodyLimit>> = {
  'POST /api/uploads': 'uploadMaxBytes',
  'POST /api/auth/login': MAX_LOGIN_BODY_BYTES,
};

/**
 * The body limit (bytes) of a request to `pathname`, from {@link BODY_LIMITS} and the operator's
 * `settings`. A path the authorization table does not know gets MAX_BODY_BYTES (it is refused
 * there anyway).
 */
export function bodyLimitFor(method: string, pathname: string, settings: BodyLimitSettings): number {
  const key = ruleKeyFor(method, pathname);
  const row = key ? BODY_LIMITS[key] : undefined;
  if (row === undefined) return MAX_BODY_BYTES;
  return typeof row === 'number' ? row : settings[row];
}
