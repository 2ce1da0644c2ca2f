/**
 * The opaque cursor of a job list page (GET /api/jobs `cursor`, `nextCursor`): base64url of the
 * decimal id of the last job on the previous page. Kept apart from views.ts so that request
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
