/**
 * The entry rules of an uploaded folder (docs/spec.md "workdir", SECURITY.md "Limits"), checked on
 * the archive's entries in order, as the folder they would build: nothing may be written outside
 * the folder or through a link.
 *
 * Rules: relative names of at most MAX_NAME characters and MAX_DEPTH components, without `..`, a
 * backslash or a NUL; files, folders and symbolic links only (no devices, FIFOs or hard links —
 * the CLI packs a hard link as a copy); no entry inside a link or a file (extraction would refuse
 * it, or write where the link points); an entry of one kind never replaced by another kind.
 *
 * A symbolic link is kept as the link it is, whatever it points at — an absolute path, a path out
 * of the folder, nothing at all — as `rsync -a` copies a link (SkyPilot's workdir sync): it is
 * stored and re-created as a link (lib/uploads/upload.ts extractUpload), never followed by the
 * server, and nothing is placed through it. Work per entry is bounded by MAX_DEPTH (a tree of
 * nodes, no path strings rebuilt).
 */

/** Longest entry name (characters; Linux's PATH_MAX). */
export const MAX_NAME = 4096;
/** Most components in an entry name. */
export const MAX_DEPTH = 256;

/** What the folder holds at one name. */
interface Node {
  kind: 'dir' | 'file' | 'link';
  /** A folder's entries. */
  children?: Map<string, Node>;
}

const KINDS: Record<string, Node['kind']> = { File: 'file', OldFile: 'file', ContiguousFile: 'file', Directory: 'dir', SymbolicLink: 'link' };
const what = (k: Node['kind']) => (k === 'link' ? 'a symbolic link' : k === 'dir' ? 'a folder' : 'a file');

/** The folder an archive's entries build, as far as the rules need it. */
export class UploadTree {
  private readonly root: Node = { kind: 'dir', children: new Map() };

  /**
   * Checks one entry and records it. Answers the problem (naming the entry) or null. `type` is
   * node-tar's entry type (File, OldFile, Directory, SymbolicLink, Link, …); `linkpath` a link's
   * target as written.
   */
  add(name: string, type: string, linkpath?: string): string | null {
    const quoted = JSON.stringify(name.slice(0, 200));
    if (name.length > MAX_NAME) return `entry ${quoted}…: names may be at most ${MAX_NAME} characters`;
    if (name.includes('\0') || name.includes('\\')) return `entry ${quoted}: names may not hold a backslash or a NUL`;
    if (name.startsWith('/')) return `entry ${quoted}: paths must be relative and stay inside the folder`;
    const parts = name.split('/').filter((p) => p !== '' && p !== '.');
    if (parts.length === 0) return type === 'Directory' ? null : `entry ${quoted}: only a folder may name the folder itself`;
    if (parts.includes('..')) return `entry ${quoted}: paths must be relative and stay inside the folder`;
    if (parts.length > MAX_DEPTH) return `entry ${quoted}: at most ${MAX_DEPTH} folders deep`;
    if (type === 'Link') return `entry ${quoted}: a hard link (to ${JSON.stringify(linkpath ?? '')}) is not accepted; pack it as a copy (jobdeck launch does)`;
    const kind = KINDS[type];
    if (!kind) return `entry ${quoted}: only files, folders and symbolic links are allowed, got ${type}`;
    let dir = this.root;
    for (let i = 0; i < parts.length - 1; i++) {
      let next = dir.children!.get(parts[i]);
      if (next && next.kind !== 'dir') return `entry ${quoted}: it is inside ${JSON.stringify(parts.slice(0, i + 1).join('/'))}, ${what(next.kind)}`;
      if (!next) dir.children!.set(parts[i], (next = { kind: 'dir', children: new Map() }));
      dir = next;
    }
    const last = parts[parts.length - 1];
    const was = dir.children!.get(last);
    if (was && (was.kind !== kind || kind === 'link')) return `entry ${quoted}: the archive already holds ${what(was.kind)} there`;
    if (was) return null;
    if (kind === 'link') {
      const target = linkpath ?? '';
      if (target === '' || target.includes('\0') || target.length > MAX_NAME) return `entry ${quoted}: a link needs a target of 1–${MAX_NAME} characters without a NUL, got ${JSON.stringify(target.slice(0, 200))}`;
    }
    dir.children!.set(last, kind === 'dir' ? { kind, children: new Map() } : { kind });
    return null;
  }
}
