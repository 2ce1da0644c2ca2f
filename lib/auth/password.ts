import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Password hashes: scrypt from node:crypto (RFC 7914; OWASP's parameters N=2^17, r=8, p=1 — 128 MiB
 * and ~0.3 s of one core per hash on a small server, which is the point). Stored as
 * `scrypt$<N>$<r>$<p>$<salt base64url>$<hash base64url>`, so parameters can grow later and old
 * hashes still verify. Passwords are 8–256 characters.
 */

const N = 2 ** 17;
const R = 8;
const P = 1;
const KEY_BYTES = 32;
/** Shortest and longest password accepted (characters). */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

function derive(password: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_BYTES, { ...opts, maxmem: 256 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** A new hash of `password` (random 16-byte salt). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N, r: R, p: P });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** True when `password` matches `stored` (constant-time compare); false for a malformed hash. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const m = /^scrypt\$(\d{1,8})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9_-]{16,64})\$([A-Za-z0-9_-]{32,128})$/.exec(stored ?? '');
  if (!m || password.length > PASSWORD_MAX) return false;
  const [n, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (n > 2 ** 20 || r > 32 || p > 16) return false;
  const expected = Buffer.from(m[5], 'base64url');
  const key = await derive(password, Buffer.from(m[4], 'base64url'), { N: n, r, p });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** Why `password` is not acceptable, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (password.length > PASSWORD_MAX) return `must be at most ${PASSWORD_MAX} characters`;
  return null;
}
