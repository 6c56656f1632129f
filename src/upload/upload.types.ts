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
  /** ATP in ten-thousandths; null without any counted play (no site rank). */
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
