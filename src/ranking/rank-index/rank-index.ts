import type { IndexedPositions, PlayerRankState, RankChange } from '../ranking.types';

/** What a write unit tells the rank index (RankIndex.runWrite). */
export interface RankWrite {
  /**
   * Applies the write's changes: inside its transaction after the last write and before the
   * commit, or after a one-statement write returned. Returns the positions of `state` when the
   * index answers them there (the in-process index), null otherwise. Must not await anything: on
   * the embedded database nothing may wait inside a transaction.
   */
  stage(changes: RankChange[], state: PlayerRankState | null): IndexedPositions | null;
  /**
   * The write may have committed without its changes staged (a one-statement write whose answer
   * was lost: a timeout, a dropped connection). The in-process index reloads from the tables.
   */
  outcomeUnknown(): void;
}

/**
 * The exact order-statistic structure behind siteRank and trackRank (docs/decisions.md "Score
 * upload"). It holds every player with a counted play, banned or not; the caller subtracts the
 * banned players ahead, which SQL counts exactly at the moment of the answer. The tables
 * player_rating and player_chart_best stay the source of truth: when the index cannot answer
 * (null), ranks come from SQL, with the same result.
 */
export abstract class RankIndex {
  abstract readonly kind: 'memory' | 'redis';

  /**
   * Runs one write unit of the players `uids` (a transaction, or one statement, that may stage
   * changes). The in-process index runs the units of one player one after the other, so each
   * player's changes are staged in commit order.
   */
  abstract runWrite<T>(uids: readonly string[], work: (write: RankWrite) => Promise<T>): Promise<T>;

  /**
   * After the commit: the positions of `state`. `staged` is what the transaction's stage answered.
   * The Redis index first brings the player's own entries up to `state` (versioned, so late or
   * repeated calls never undo a newer state). null: the index cannot answer now.
   */
  abstract positions(state: PlayerRankState, staged: IndexedPositions | null): Promise<IndexedPositions | null>;

  /**
   * Outside any write: how many entries are ahead of each of several bests of player `uid` (a
   * profile), in order; each best's entry is read and brought forward as positions() does with no
   * ATP. One snapshot of the in-process index; one script call in Redis. null: the index cannot
   * answer now.
   */
  abstract trackPositions(uid: string, bests: readonly TrackRead[]): Promise<number[] | null>;

  /**
   * After the commit of a batch that changed many players (admin recompute): brings their entries
   * up to the committed versions. The in-process index staged them already.
   */
  abstract syncEntries(entries: IndexEntries): Promise<void>;

  /**
   * The entries around `read.key` in one order (banned players included), read in one snapshot;
   * null when the index cannot answer now or does not hold exactly that key (a stale entry: the
   * caller answers from SQL).
   */
  abstract window(read: IndexWindowRead): Promise<IndexWindow | null>;

  /** Reloads the index from the tables (lost consistency). */
  abstract rebuild(): Promise<void>;

  /** What the metrics show: whether it answers, and how much it holds (null: not counted here). */
  abstract stats(): Promise<RankIndexStats>;

  /**
   * How often this instance found the index not bound to this database's data, by reason
   * (redis-index-binding.ts; the in-process index is built from this database by construction).
   */
  bindingMismatches(): ReadonlyMap<string, number> {
    return new Map();
  }
}

/** One of a player's bests as trackPositions() reads it: the chart and the best (PlayerRankState.best). */
export interface TrackRead {
  levelId: number;
  best: NonNullable<PlayerRankState['best']>;
}

/** A key of a rank order, ascending: (−ATP in ten-thousandths, 0, uid) on the site; (−acc, first reached, uid) on a chart. */
export type RankKey = [number, number, number];

/** The site order's key of a player with `atpE4` (ATP in ten-thousandths). */
export const siteKey = (atpE4: number, uid: number | string): RankKey => [-atpE4, 0, Number(uid)];

/** A chart's track-order key of a best. */
export const trackKey = (acc: number, firstTimeMs: number, uid: number | string): RankKey => [
  -acc,
  firstTimeMs,
  Number(uid),
];

/** A window read: the site order (levelId null) or a chart's, around a key, up to `ahead` and `behind` entries on each side. */
export interface IndexWindowRead {
  levelId: number | null;
  key: RankKey;
  ahead: number;
  behind: number;
}

/** The entries ahead of the key (position: how many), the nearest ones on each side in board order. */
export interface IndexWindow {
  position: number;
  ahead: RankKey[];
  behind: RankKey[];
}

export interface RankIndexStats {
  /** Answers ranks (false: building, lost, or Redis down; ranks come from SQL meanwhile). */
  ready: boolean;
  /** Players in the site ranking. */
  rankedPlayers: number | null;
  /** Per-chart entries over every chart (the in-process index only: Redis would need a key scan). */
  chartEntries: number | null;
}

/**
 * Committed entries with their versions (the player's rating version at their last change), and
 * the entries that are gone (a player without any counted play left, a chart without a best left),
 * with the version of their removal.
 */
export interface IndexEntries {
  sites: Array<{ uid: string; version: number; atpE4: number }>;
  tracks: Array<{ uid: string; levelId: number; version: number; acc: number; firstTimeMs: number }>;
  removedSites?: Array<{ uid: string; version: number }>;
  removedTracks?: Array<{ uid: string; levelId: number; version: number }>;
}
