import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config';

/**
 * The admin token: generation, hashing, constant-time comparison and the files in the data
 * folder ($JOBDECK_HOME, default ~/.jobdeck):
 *
 * - `token`        — the plain token, mode 0600, for the local CLI (readLocalToken) and the login
 *                    URL printed at start. Like Jupyter's runtime files. May be deleted: the
 *                    server keeps working from the hash below.
 * - `token.sha256` — hex sha256 of the token, mode 0600: what the server compares against.
 *
 * Neither file is written when JOBDECK_TOKEN is set (the operator owns the token then).
 */

// The plain token file's place and its reading are shared with the CLI, which imports no lib/auth.
export { readLocalToken, TOKEN_FILE, tokenPath } from '../config';

/** File name of the token's hex sha256 inside the data folder. */
export const TOKEN_HASH_FILE = 'token.sha256';
/** Shortest token accepted from JOBDECK_TOKEN (characters). Generated tokens have 46. */
export const MIN_TOKEN_LENGTH = 16;
/** Prefix of generated tokens (makes them recognisable to secret scanners). */
export const TOKEN_PREFIX = 'jd_';

/** A new random admin token: `jd_` + 32 random bytes, base64url (256 bits of entropy). */
export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** sha256 of a token (32 bytes). A fast hash suffices: generated tokens carry 256 random bits. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * Compares two secrets in constant time, whatever their lengths: both are reduced to sha256
 * digests (equal length, as crypto.timingSafeEqual requires), so neither the content nor the
 * length of the expected value leaks through timing.
 */
export function constantTimeEqual(a: string | Uint8Array, b: string | Uint8Array): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}

/**
 * True when `presented` is the token whose sha256 is `expectedHash` (32 bytes). Constant time:
 * crypto.timingSafeEqual over two 32-byte digests. False for an empty/absent token or hash.
 */
export function verifyToken(presented: string | null | undefined, expectedHash: Buffer | null): boolean {
  if (!presented || !expectedHash || expectedHash.length !== 32) return false;
  return timingSafeEqual(hashToken(presented), expectedHash);
}

/** Path of the token hash file for a data folder. */
export function tokenHashPath(home?: string): string {
  return path.join(/*turbopackIgnore: true*/ home ?? loadConfig().home, TOKEN_HASH_FILE);
}

/**
 * Creates the data folder with mode 0700 when it is missing (an existing folder keeps its mode;
 * the files in it are 0600 regardless). Returns true when the folder is group/world-accessible.
 */
export function ensurePrivateDir(dir: string): boolean {
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }
  return (statSync(dir).mode & 0o077) !== 0;
}

/**
 * Writes `content` to `file` with mode 0600, atomically (temp file + rename), so a reader never
 * sees a half-written secret and the secret never exists with wider permissions.
 */
export function writePrivateFile(file: string, content: string): void {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/** Reads a small private file; null when missing. Tightens its mode to 0600 if it was wider. */
export function readPrivateFile(file: string): string | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    if ((fstatSync(fd).mode & 0o077) !== 0) chmodSync(file, 0o600);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}
