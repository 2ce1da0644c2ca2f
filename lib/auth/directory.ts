import { createHash } from 'node:crypto';
import type { ApiToken, User } from '../generated/prisma/client';
import { isRole, type Role } from '../jobs/roles';
import { FIRST_ADMIN_ID, listUsers, liveTokenIds, liveTokenSet, liveTokensById, touchToken, type StoreScope } from '../store';

/**
 * What authentication knows of users and personal tokens, in memory: every request and
 * WebSocket upgrade is checked synchronously against it (the gates run before any await). It is
 * loaded from the database at start (reload()), changed at once by this server's own writes
 * (putUser, putToken, dropToken — a revoke holds from the next request), and reloaded every
 * DIRECTORY_RELOAD_MS so another server's changes on one PostgreSQL hold within that time. A
 * reload reads every user, but token rows only for tokens it does not hold yet: it first asks
 * for the live tokens' count and digest of ids (lib/store liveTokenSet) and, when that moved,
 * their ids — with an attempt's token per running attempt, reading every row every second was
 * most of a steady server's database time (bench/README.md).
 * A local write made while a reload reads is applied again on top of what the read returns (the
 * read may predate it): a token created then works at once, and one revoked then stays revoked.
 * A token that disappears or is revoked in a reload is announced to `onTokenRevoke` like a
 * local revoke (its WebSockets close), and every change to `onChange`, after which each open
 * stream checks its credential again (expiry, revoke, disable, the user's epochs).
 */

/** How often the directory is read again from the database (ms). */
export const DIRECTORY_RELOAD_MS = 1000;
/** A token's lastUsedAt is written at most this often (ms). */
export const TOKEN_USE_WRITE_MS = 60_000;

/** A user as authentication sees it. */
export interface DirectoryUser {
  id: number;
  name: string;
  role: Role;
  disabled: boolean;
  passwordHash: string | null;
  maxRunningCpus: number | null;
  maxPendingJobs: number | null;
  /** Sessions issued under another epoch no longer authenticate (User.sessionEpoch: a disable, a password change). */
  sessionEpoch: number;
  /** Tokens made under another epoch no longer authenticate (User.tokenEpoch: a disable). */
  tokenEpoch: number;
}

/** A personal token as authentication sees it. */
export interface DirectoryToken {
  id: number;
  userId: number;
  prefix: string;
  /** ms since epoch; null: no expiry. */
  expiresAt: number | null;
  /** Its user's tokenEpoch when it was made (ApiToken.userEpoch). */
  epoch: number;
  /** An attempt's own token (ApiToken.attemptId): it lives as long as the attempt; null: a personal token. */
  attemptId: number | null;
}

/** The first admin when its row cannot be read (a database not migrated yet in a unit test). */
const FIRST_ADMIN: DirectoryUser = { id: FIRST_ADMIN_ID, name: 'admin', role: 'admin', disabled: false, passwordHash: null, maxRunningCpus: null, maxPendingJobs: null, sessionEpoch: 0, tokenEpoch: 0 };

/** A User row as a DirectoryUser (an unknown role reads as viewer: fail closed). */
export function directoryUser(u: User): DirectoryUser {
  return {
    id: u.id,
    name: u.name,
    role: isRole(u.role) ? u.role : 'viewer',
    disabled: u.disabledAt !== null,
    passwordHash: u.passwordHash,
    maxRunningCpus: u.maxRunningCpus,
    maxPendingJobs: u.maxPendingJobs,
    sessionEpoch: u.sessionEpoch,
    tokenEpoch: u.tokenEpoch,
  };
}

function directoryToken(t: ApiToken): DirectoryToken {
  return { id: t.id, userId: t.userId, prefix: t.prefix, expiresAt: t.expiresAt ? t.expiresAt.getTime() : null, epoch: t.userEpoch, attemptId: t.attemptId };
}

/** Users and live tokens of one server (see the module comment). */
export class AuthDirectory {
  private users = new Map<number, DirectoryUser>([[FIRST_ADMIN_ID, FIRST_ADMIN]]);
  /** Live tokens by the hex sha256 of the token. */
  private tokens = new Map<string, DirectoryToken>();
  /** The live tokens as the last reload read them (local writes not applied), and their set's count and digest. */
  private readTokens = new Map<string, DirectoryToken>();
  private readSet: { count: number; digest: string } | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** The reload under way (one at a time), and the local writes made while it reads. */
  private reloading: Promise<void> | null = null;
  private replay: Array<() => void> | null = null;
  /** Token id → last use (ms) not yet written, and when each was last written. */
  private readonly uses = new Map<number, number>();
  private readonly written = new Map<number, number>();
  /** Called with a token's id when it stops authenticating (revoked, deleted, its user disabled). */
  readonly onTokenRevoke = new Set<(tokenId: number) => void>();
  /** Called with a user's id when it is disabled (its sessions' sockets close). */
  readonly onUserDisabled = new Set<(userId: number) => void>();
  /**
   * Called after anything may have changed: a reload swapped its read in, or this server wrote a
   * user or a token. Open streams check their credential again (lib/ws/hub.ts).
   */
  readonly onChange = new Set<() => void>();

  /** A user by id (the first admin even before the first load). */
  user(id: number): DirectoryUser | undefined {
    return this.users.get(id);
  }

  /** A user by name. */
  userByName(name: string): DirectoryUser | undefined {
    for (const u of this.users.values()) if (u.name === name) return u;
    return undefined;
  }

  /** A live token by its id (ApiToken.id); undefined when revoked or unknown. */
  tokenById(id: number): DirectoryToken | undefined {
    for (const t of this.tokens.values()) if (t.id === id) return t;
    return undefined;
  }

  /** The live token whose sha256 is `hashHex`, with its user; undefined when none. */
  token(hashHex: string): { token: DirectoryToken; user: DirectoryUser | undefined } | undefined {
    const token = this.tokens.get(hashHex);
    return token ? { token, user: this.users.get(token.userId) } : undefined;
  }

  /** Notes that a token authenticated a request at `now` (written by the next reload, at most once a TOKEN_USE_WRITE_MS). */
  noteUse(tokenId: number, now: number): void {
    if (now - (this.written.get(tokenId) ?? 0) >= TOKEN_USE_WRITE_MS) this.uses.set(tokenId, now);
  }

  /** True when a user has a password (the login page then leads with the password form; a disabled one's refusal shows there too). */
  hasPasswordUsers(): boolean {
    for (const u of this.users.values()) if (u.passwordHash) return true;
    return false;
  }

  /** True when any personal token is live. */
  hasTokens(): boolean {
    return this.tokens.size > 0;
  }

  /** Records a user's row as written (this server's own write). */
  putUser(u: User): void {
    const was = this.users.get(u.id);
    const now = directoryUser(u);
    this.local(() => this.users.set(u.id, now));
    if (now.disabled && !was?.disabled) this.announceDisabled(u.id);
    this.announceChange();
  }

  /** Records a new token (this server's own write). */
  putToken(t: ApiToken): void {
    if (t.revokedAt) this.dropToken(t.id);
    else this.local(() => this.tokens.set(t.hash, directoryToken(t)));
    this.announceChange();
  }

  /** Forgets a token at once (revoked) and announces it. */
  dropToken(id: number): void {
    this.local(() => {
      for (const [h, t] of this.tokens) if (t.id === id) this.tokens.delete(h);
    });
    this.announceRevoked(id);
    this.announceChange();
  }

  /** Forgets an attempt's own token at once (its attempt ended: the database revoked it in the same write). */
  dropAttemptToken(attemptId: number): void {
    for (const t of this.tokens.values()) if (t.attemptId === attemptId) this.dropToken(t.id);
  }

  /** Reads every user and live token again (one read at a time); tokens gone since the last read are announced. */
  reload(store: StoreScope): Promise<void> {
    this.reloading ??= this.readAgain(store).finally(() => {
      this.reloading = null;
    });
    return this.reloading;
  }

  /** Applies a local write now, and again after a reload under way swaps its read in. */
  private local(apply: () => void): void {
    apply();
    this.replay?.push(apply);
  }

  private async readAgain(store: StoreScope): Promise<void> {
    this.replay = [];
    try {
      for (const [id, at] of [...this.uses]) {
        this.uses.delete(id);
        this.written.set(id, at);
        await touchToken(store, id, new Date(at));
      }
      const [users, read] = await Promise.all([listUsers(store), this.readLiveTokens(store)]);
      const before = { users: this.users, tokens: this.tokens };
      this.users = new Map(users.map((u) => [u.id, directoryUser(u)]));
      if (!this.users.has(FIRST_ADMIN_ID)) this.users.set(FIRST_ADMIN_ID, FIRST_ADMIN);
      this.tokens = new Map(read);
      for (const apply of this.replay) apply();
      const goneTokens = [...before.tokens.entries()].filter(([h]) => !this.tokens.has(h)).map(([, t]) => t.id);
      const newlyDisabled = [...this.users.values()].filter((u) => u.disabled && before.users.get(u.id)?.disabled === false).map((u) => u.id);
      for (const id of goneTokens) this.announceRevoked(id);
      for (const id of newlyDisabled) this.announceDisabled(id);
      this.announceChange();
    } finally {
      this.replay = null;
    }
  }

  /**
   * The live tokens by hash, as the database has them now: the last read's when the live set's
   * count and digest are unchanged; else the last read's still live plus the rows of new ids.
   */
  private async readLiveTokens(store: StoreScope): Promise<Map<string, DirectoryToken>> {
    const set = await liveTokenSet(store);
    if (this.readSet && set.count === this.readSet.count && set.digest === this.readSet.digest) return this.readTokens;
    const ids = await liveTokenIds(store);
    const live = new Set(ids);
    const held = new Set<number>();
    const next = new Map<string, DirectoryToken>();
    for (const [h, t] of this.readTokens) {
      if (live.has(t.id)) {
        next.set(h, t);
        held.add(t.id);
      }
    }
    for (const t of await liveTokensById(store, ids.filter((id) => !held.has(id)))) next.set(t.hash, directoryToken(t));
    // The digest of what is held now (a token revoked between the two reads is not in it).
    const heldIds = [...next.values()].map((t) => t.id).sort((a, b) => a - b);
    this.readTokens = next;
    this.readSet = { count: heldIds.length, digest: createHash('md5').update(heldIds.join(',')).digest('hex') };
    return next;
  }

  /** Reloads every DIRECTORY_RELOAD_MS until stop() (a failed read keeps the last one). */
  start(store: StoreScope, onError: (err: unknown) => void): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.reload(store).catch(onError), DIRECTORY_RELOAD_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private announceRevoked(id: number): void {
    for (const l of this.onTokenRevoke) {
      try {
        l(id);
      } catch {
        // A listener's failure must not undo the revoke.
      }
    }
  }

  private announceChange(): void {
    for (const l of this.onChange) {
      try {
        l();
      } catch {
        // A listener's failure must not stop the others.
      }
    }
  }

  private announceDisabled(id: number): void {
    for (const l of this.onUserDisabled) {
      try {
        l(id);
      } catch {
        // Same as above.
      }
    }
  }
}
