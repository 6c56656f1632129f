import { createHash } from 'node:crypto';
import type { RankKey } from '../rank-index/rank-index';
import { luaScript } from './lua-scripts';
import { orderTreeLua, siteRankKey, TREE_DAMAGED, trackRankKey } from './redis-order-tree';

/**
 * What the Redis rank index sends and where it writes: its scripts (lua/*.lua, read once) and
 * their sha1s, its key names by generation (IndexKeys), the per-player store fields, and the
 * decoding of a window's answer. RedisRankIndex (redis-rank-index.ts) holds the state and runs them.
 */

/**
 * Key names carry a format: `rank3:` since the orders are counted B+-trees of binary records
 * (redis-order-tree.ts). A new format is built from the tables; the keys of the previous ones
 * (`rank:`, `rank2:`) are deleted once it is ready.
 */
export const FORMAT = 'rank3';
export const OLD_FORMAT_PATTERNS = ['rank:*', 'rank2:*'];
/**
 * The generation in use (absent: 0). A damaged tree (a node evicted or deleted by hand) cannot be
 * repaired in place, since versioned writes skip what they think is there: the instance that finds
 * the damage moves the generation on (once, compare-and-set) and builds the new one from the
 * tables; the damaged one is deleted once the new one is ready.
 */
export const GENERATION = `${FORMAT}:gen`;
/**
 * Binds a generation to a database before its build writes an entry. KEYS: binding. ARGV: the
 * database, Redis's run_id ('' unknown). Answers the database the generation is bound to: another
 * one means another deployment builds or built it (nothing is written then).
 */
export const BIND_LUA = luaScript('bind');
/** Moves the generation on from ARGV[1] unless another instance did already; answers the current one. */
export const NEXT_GENERATION_LUA = luaScript('next-generation');
/** The versions and keys of eight players (uid div 8) share a hash (see IndexKeys.store). */
export const PLAYERS_PER_STORE = 8;

/** The key names of one generation of the index: `rank3:…` for generation 0, `rank3:g<n>:…` after. */
export class IndexKeys {
  readonly base: string;
  readonly ready: string;
  readonly site: string;
  /** Which database the generation was built from, and how far its writes got (redis-index-binding.ts). */
  readonly binding: string;

  constructor(readonly generation: number) {
    this.base = generation === 0 ? `${FORMAT}:` : `${FORMAT}:g${generation}:`;
    this.ready = `${this.base}ready`;
    this.site = `${this.base}s`;
    this.binding = `${this.base}db`;
  }

  track(levelId: number): string {
    return `${this.base}t:${levelId}`;
  }

  /**
   * A hash of eight players, so that it stays a compact listpack: field `s<uid mod 8>` = the site
   * entry's version and key, field `<levelId · 8 + uid mod 8>` = a best's.
   */
  store(uid: string): string {
    return `${this.base}p:${Math.floor(Number(uid) / PLAYERS_PER_STORE)}`;
  }
}

/** A script error that says the trees are damaged (a node missing, counts that do not add up, a truncated node). */
export const isDamage = (error: unknown) =>
  error instanceof Error && (error.message.includes(TREE_DAMAGED) || error.message.includes('data string too short'));
export const siteField = (uid: string) => `s${Number(uid) % PLAYERS_PER_STORE}`;
export const trackField = (uid: string, levelId: number) =>
  String(levelId * PLAYERS_PER_STORE + (Number(uid) % PLAYERS_PER_STORE));
export const PAGE = 20_000;
/** Entries per LOAD script call, and script calls per pipeline. */
export const LOAD_BATCH = 250;
export const LOAD_PIPELINE = 8;

/**
 * Shared by the scripts: versioned entries. A player's stored entry of an order is its version
 * (6 bytes) and, unless it was removed, its record without the uid. An entry only moves forward: a
 * write older than the stored version is ignored, so late, repeated and rebuild writes are
 * harmless. A missing node is damage, which no write repairs (RedisRankIndex.failed).
 */
export const UPSERT_LUA = orderTreeLua() + luaScript('upsert');

/**
 * KEYS: ready, site tree, player store, chart tree, binding. ARGV: uid, site field, version, site
 * number ('' = not ranked), chart field ('' = no best there), best version, chart numbers (3), the
 * database. Returns {site ahead, chart ahead} (-1: not ranked), -2 when the index is not built, -3
 * when it is bound to another database (nothing written).
 * When the player's stored entry is newer than the state asked about (a later upload of the same
 * player got there first), the answer is still the asked state's position, without counting the
 * player's own newer entry.
 */
export const SYNC_AND_RANK_LUA = UPSERT_LUA + luaScript('sync-and-rank');

/**
 * One player's ranks on several charts in one call (a profile's bests; no site entry touched).
 * KEYS: ready, player store, binding, then the chart tree of each best. ARGV: uid, the database,
 * then five per best: chart field, best version, chart numbers (3). Brings each best's entry
 * forward as SYNC_AND_RANK_LUA does and returns the entries ahead of each, in order; -2 when the
 * index is not built, -3 when it is bound to another database (nothing written).
 */
export const TRACK_RANKS_LUA = UPSERT_LUA + luaScript('track-ranks');

/**
 * Versioned writes of many committed entries in one call. KEYS: the binding, then a (tree, player
 * store) pair per entry. ARGV: the database, then 'site' and (uid, field, version, a) per entry,
 * 'track' and (uid, field, version, a1, a2, t) per entry, or 'unsite' / 'untrack' and (uid,
 * field, version): a removal, kept as the version in the store so older writes stay ignored.
 * Returns the entries, or -3 when the index is bound to another database (nothing written).
 */
export const LOAD_LUA = UPSERT_LUA + luaScript('load');

/**
 * A window, read only, in one call. KEYS: ready, tree, binding. ARGV: 's' or 't', the key's
 * numbers (with the uid), entries ahead, entries behind, the database. Returns {rank, ahead,
 * behind}, each side the records' numbers one after the other; -1 when the tree does not hold
 * exactly that key (a stale entry: the caller answers from SQL and its rank read re-syncs the
 * entry), -2 when the index is not built, -3 when it is bound to another database.
 */
export const WINDOW_LUA = orderTreeLua() + luaScript('window');

/** Every script the index sends, as Redis receives it (lua-scripts.spec.ts loads each into Redis). */
export const RANK_INDEX_SCRIPTS = {
  bind: BIND_LUA,
  nextGeneration: NEXT_GENERATION_LUA,
  syncAndRank: SYNC_AND_RANK_LUA,
  trackRanks: TRACK_RANKS_LUA,
  load: LOAD_LUA,
  window: WINDOW_LUA,
};

/** The rank keys of a window side's numbers (2 a site record, 4 a chart record). */
export function keysOf(numbers: number[], site: boolean): RankKey[] {
  const keys: RankKey[] = [];
  if (site) for (let i = 0; i < numbers.length; i += 2) keys.push(siteRankKey(numbers[i], numbers[i + 1]));
  else
    for (let i = 0; i < numbers.length; i += 4)
      keys.push(trackRankKey(numbers[i], numbers[i + 1], numbers[i + 2], numbers[i + 3]));
  return keys;
}

export const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
/** A write script found the index bound to another database than the one it was given. */
export class OtherDatabaseIndex extends Error {
  constructor() {
    super('the Redis rank index is bound to another database');
  }
}
