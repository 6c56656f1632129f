import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { EVENT_BUS, EventBus } from '../common/events/events';
import type { ServerSessionLookup } from './session.repository';

/** How long this instance trusts a server-token lookup it made; bounds what it may miss (see below). */
export const SERVER_SESSION_CACHE_MS = 1_000;
/** Live game-server sessions are a few hundred; the bound only stops a flood of distinct tokens. */
const MAX_ENTRIES = 10_000;

interface Entry {
  session: ServerSessionLookup;
  cachedUntil: number;
}

/**
 * Per-instance memo of live server sessions by token hash: every call of a game server (uploads
 * above all) starts with this lookup, and a session changes only at login, refresh and logout.
 * Staleness is bounded and mostly zero:
 *   - this instance forgets a session it ended (replacement, logout) and a token it rotated
 *     (refresh) at once, so on one instance nothing changes;
 *   - other instances forget an ended session when its `server_session.ended` event arrives
 *     (the event bus, milliseconds), and a rotated token after SERVER_SESSION_CACHE_MS.
 * Expiry is checked against the cached expiry on every use. Unknown and ended tokens are never
 * cached: they always go to the database.
 */
@Injectable()
export class ServerSessionCache implements OnModuleInit, OnModuleDestroy {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every forget: a lookup that started before one must not be remembered after it. */
  private epoch = 0;
  /**
   * Database lookups in flight, by token hash, with the epoch they started in. A game server's
   * calls come in parallel, so when its entry runs out several of them miss at once; they share
   * one query — but only while nothing was forgotten since it started, so a caller never gets an
   * answer older than one it could have got without the sharing.
   */
  private readonly pending = new Map<string, { epoch: number; lookup: Promise<ServerSessionLookup | null> }>();
  private unsubscribe: (() => void) | null = null;

  constructor(@Inject(EVENT_BUS) private readonly events: EventBus) {}

  onModuleInit(): void {
    this.unsubscribe = this.events.subscribe((event) => {
      if (event.type === 'server_session.ended') this.forgetSessions(event.sessionIds);
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
    this.entries.clear();
    this.pending.clear();
  }

  get(tokenHash: string, now = Date.now()): ServerSessionLookup | null {
    const entry = this.entries.get(tokenHash);
    if (!entry) return null;
    if (entry.cachedUntil <= now) {
      this.entries.delete(tokenHash);
      return null;
    }
    return entry.session;
  }

  /** The session of `tokenHash`: remembered, or looked up with `load` (shared by concurrent callers, see `pending`). */
  lookup(tokenHash: string, load: () => Promise<ServerSessionLookup | null>): Promise<ServerSessionLookup | null> {
    const cached = this.get(tokenHash);
    if (cached) return Promise.resolve(cached);
    const running = this.pending.get(tokenHash);
    if (running && running.epoch === this.epoch) return running.lookup;
    const epoch = this.epoch;
    const lookup = load()
      .then((session) => {
        if (session) this.remember(tokenHash, session, epoch);
        return session;
      })
      .finally(() => {
        if (this.pending.get(tokenHash)?.lookup === lookup) this.pending.delete(tokenHash);
      });
    this.pending.set(tokenHash, { epoch, lookup });
    return lookup;
  }

  /** Taken before a database lookup, handed to remember() with its result. */
  ticket(): number {
    return this.epoch;
  }

  /**
   * Remembers a live session, unless something was forgotten since the lookup began (its row may
   * predate a logout that committed while the query ran).
   */
  remember(tokenHash: string, session: ServerSessionLookup, ticket: number, now = Date.now()): void {
    if (session.endedAt !== null || ticket !== this.epoch) return;
    if (this.entries.size >= MAX_ENTRIES) {
      // Map keeps insertion order: drop the oldest.
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(tokenHash, { session, cachedUntil: now + SERVER_SESSION_CACHE_MS });
  }

  forgetToken(tokenHash: string): void {
    this.epoch++;
    this.entries.delete(tokenHash);
  }

  forgetSessions(sessionIds: readonly string[]): void {
    if (sessionIds.length === 0) return;
    this.epoch++;
    const ended = new Set(sessionIds);
    for (const [hash, entry] of this.entries) if (ended.has(entry.session.id)) this.entries.delete(hash);
  }
}
