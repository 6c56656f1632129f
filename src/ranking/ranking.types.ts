/** The rank keys and rank answers that the rank indexes, the boards and their callers (the upload) share. */

/** A player's best on one chart as the track order sees it: acc desc, then first reached asc (then uid asc). */
export interface TrackPosition {
  acc: number;
  firstTimeMs: number;
}

/** The rank-relevant state of a player after an upload (or as stored, for a duplicate). */
export interface PlayerRankState {
  uid: string;
  /** player_rating.version; 0 without a row. */
  version: number;
  /** ATP in ten-thousandths; null without any counted play, or when only the track rank is asked (no site rank then). */
  atpE4: number | null;
  levelId: number;
  /** The best on `levelId`: its record and the version of its last change; null without a counted play there. */
  best: (TrackPosition & { recordId: string; version: number }) | null;
}

/** One player's change, before → after, for the in-process rank index. */
export interface RankChange {
  uid: string;
  /** ATP in ten-thousandths; null: not ranked. Omitted when ATP did not change. */
  site?: { before: number | null; after: number | null };
  tracks: Array<{ levelId: number; before: TrackPosition | null; after: TrackPosition | null }>;
}

/** How many entries of the rank index are ahead of the player (banned players included). */
export interface IndexedPositions {
  siteAhead: number | null;
  trackAhead: number | null;
}

export interface BestRow extends TrackPosition {
  recordId: string;
  rating: number;
  version: number;
}

export interface StoredBest extends BestRow {
  uid: string;
  levelId: number;
}

/** What an upload needs to know about bans: whether the player is banned, and which ban generation its snapshot saw. */
export interface BanCheck {
  selfBanned: boolean;
  /** rank_ban_generation at the statement's snapshot. */
  generation: number;
  /** The database's clock (epoch ms), against which bans run out. */
  dbNowMs: number;
}

/** The banned players' rank keys: ratings, and bests on every chart; the earliest end of their bans. */
export interface BannedKeys {
  generation: number;
  /** Epoch ms of the first ban of the set to run out; null when all are permanent. */
  firstUntilMs: number | null;
  /** `home`: the player's home server (scoped boards; null: none), copied onto every best (a banned player cannot log in, so it does not move). */
  sites: Array<{ uid: string; atp: string; home: number | null }>;
  tracks: Array<{ uid: string; levelId: number; acc: number; firstTimeMs: number; home: number | null }>;
}
