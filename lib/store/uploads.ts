/**
 * Who sent each upload (docs/design.md §16 "Uploads are owned"): uploads are stored once per
 * content hash, so several users may have sent the same bytes; a submit may name only an upload
 * its user sent (a re-run reuses its job's).
 */
import type { Store } from './handle';

/** Records that `userId` sent the upload `hash` (again: nothing changes). */
export async function recordUploadOwner(store: Store, hash: string, userId: number): Promise<void> {
  await store.prisma.uploadOwner.createMany({ data: [{ hash, userId }], skipDuplicates: true });
}

/** Which of `hashes` user `userId` sent. */
export async function uploadsSentBy(store: Store, hashes: readonly string[], userId: number): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const rows = await store.prisma.uploadOwner.findMany({ where: { userId, hash: { in: [...new Set(hashes)] } }, select: { hash: true } });
  return new Set(rows.map((r) => r.hash));
}
