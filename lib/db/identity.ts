/**
 * Which database a data folder belongs to, and which folder a database belongs to. A folder
 * (JOBDECK_HOME) holds the attempts' folders (`jobs/<id>/task-<i>/attempt-<n>`) and logs of the
 * jobs of ONE database: a second database on the same folder would give its job 1 the same
 * attempt folder as the first one's job 1, and the two servers would overwrite and kill each
 * other's attempts. So each side records the other's identity at the first start — the folder
 * in `database.json` (the database's random id and how it was reached), the database in its
 * one `DataFolder` row (the folder's random id and path) — and a start where they do not name
 * each other is refused with a message naming both (docs/design.md §9).
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { PrismaClient } from '../generated/prisma/client';

/** The file in the data folder naming its database. */
export const IDENTITY_FILE = 'database.json';

/** What `database.json` holds. */
interface FolderIdentity {
  /** The folder's own random id (also in the database's DataFolder row). */
  folder: string;
  /** The database's random id (its DataFolder row's databaseId). */
  database: string;
  /** How that database was reached, for messages: `PGlite at …` or a PostgreSQL URL without password. */
  databaseLabel: string;
}

/** The data folder and the database do not belong together; nothing was written. */
export class DataFolderMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataFolderMismatchError';
  }
}

/** How a database is named in messages: `PGlite at <dir>`, or its URL without the password. */
export function databaseLabel(databaseUrl: string | undefined, pgliteDir: string): string {
  if (!databaseUrl) return `PGlite at ${pgliteDir}`;
  try {
    const u = new URL(databaseUrl);
    u.password = '';
    u.search = '';
    return `PostgreSQL ${u.toString().replace(/\/$/, '')}`;
  } catch {
    return 'PostgreSQL (DATABASE_URL)';
  }
}

function readFolderIdentity(file: string): FolderIdentity | null {
  if (!existsSync(file)) return null;
  const v = JSON.parse(readFileSync(file, 'utf8')) as Partial<FolderIdentity>;
  if (typeof v.folder !== 'string' || typeof v.database !== 'string') throw new DataFolderMismatchError(`${file} is not a jobdeck data folder identity: expected {"folder", "database"}; move it away only if this folder is not in use`);
  return { folder: v.folder, database: v.database, databaseLabel: typeof v.databaseLabel === 'string' ? v.databaseLabel : 'another database' };
}

function writeFolderIdentity(file: string, id: FolderIdentity): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(id, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

const ADVICE = 'a data folder belongs to one database: start with the JOBDECK_HOME and DATABASE_URL that were used together, or give this database a new empty JOBDECK_HOME';

/**
 * Checks (and at the first start records) that `home` and the database belong together:
 * - neither has an identity (a new pair, or both from before this check): both are recorded;
 * - both do and name each other: fine;
 * - anything else is refused.
 * `label` names this database in messages (databaseLabel()).
 * @throws DataFolderMismatchError naming the folder, the database it belongs to, and this one.
 */
export async function checkDataFolder(prisma: PrismaClient, home: string, label: string): Promise<void> {
  const file = path.join(home, IDENTITY_FILE);
  const folder = readFolderIdentity(file);
  let row = await prisma.dataFolder.findUnique({ where: { id: 1 } });
  if (!row && folder) {
    throw new DataFolderMismatchError(
      `the data folder ${home} belongs to the database ${folder.databaseLabel} (id ${folder.database}), but this server's database, ${label}, has never been used with it (it records no data folder); ${ADVICE}`,
    );
  }
  if (!row) {
    const mine = { id: 1, databaseId: randomUUID(), folderId: randomUUID(), folderPath: home };
    await prisma.dataFolder.createMany({ data: [mine], skipDuplicates: true });
    row = await prisma.dataFolder.findUniqueOrThrow({ where: { id: 1 } });
    if (row.folderId === mine.folderId) {
      writeFolderIdentity(file, { folder: row.folderId, database: row.databaseId, databaseLabel: label });
      return;
    }
    // Another server recorded its folder first (a concurrent first start): compare with that.
  }
  const now = folder ?? readFolderIdentity(file);
  if (!now) {
    throw new DataFolderMismatchError(
      `the database ${label} belongs to the data folder ${row.folderPath} (id ${row.folderId}), but this server's data folder, ${home}, was never used with it (it has no ${IDENTITY_FILE}); ${ADVICE}`,
    );
  }
  if (now.database !== row.databaseId || now.folder !== row.folderId) {
    throw new DataFolderMismatchError(
      `the data folder ${home} belongs to the database ${now.databaseLabel} (id ${now.database}), and this server's database, ${label} (id ${row.databaseId}), belongs to the data folder ${row.folderPath} (id ${row.folderId}); ${ADVICE}`,
    );
  }
}
