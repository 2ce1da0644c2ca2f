/**
 * The opaque cursor of a job list page (GET /api/jobs `cursor`, `nextCursor`): base64url of the
 * decimal id of the last job on the previous page (sorted by id, either way), or of `id:name`
 * (sorted by name: the page after that name and id). Kept apart from views.ts so that request
 * parsing loads no database code.
 */
import { MAX_JOB_ID } from '../store/list';

/** The opaque cursor for "jobs older than this id": base64url of the decimal id. */
export function encodeCursor(lastId: number): string {
  return Buffer.from(String(lastId), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor made by encodeCursor(). Returns the id, or null when the text is not one
 * (wrong alphabet, not a positive integer, out of range) — callers answer 400.
 */
export function decodeCursor(cursor: string): number | null {
  if (!/^[A-Za-z0-9_-]{1,16}$/.test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[1-9][0-9]{0,9}$/.test(text)) return null;
  // Reject non-canonical encodings so one page has one cursor.
  if (encodeCursor(Number(text)) !== cursor) return null;
  const id = Number(text);
  return id <= MAX_JOB_ID ? id : null;
}

/** Longest job name a cursor carries (the API's name limit). */
const MAX_CURSOR_NAME = 200;

/** The cursor for "jobs after this (name, id)" of a list sorted by name: base64url of `id:name`. */
export function encodeNameCursor(lastId: number, lastName: string): string {
  return Buffer.from(`${lastId}:${lastName}`, 'utf8').toString('base64url');
}

/** Decodes a cursor made by encodeNameCursor(); null when the text is not one. */
export function decodeNameCursor(cursor: string): { id: number; name: string } | null {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^([1-9][0-9]{0,9}):([\s\S]*)$/.exec(text);
  if (!m || m[2].length > MAX_CURSOR_NAME || encodeNameCursor(Number(m[1]), m[2]) !== cursor) return null;
  const id = Number(m[1]);
  return id <= MAX_JOB_ID ? { id, name: m[2] } : null;
}
