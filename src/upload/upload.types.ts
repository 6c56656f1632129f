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

/** A record as stored, every field of the upload plus where it came from. */
export interface NewPlayRecord {
  uid: string;
  levelId: number;
  timeMs: number;
  playerTimestampMs: number;
  acc: number;
  pass: boolean;
  fullCombo: boolean;
  allPerfect: boolean;
  isNewRecord: boolean;
  maxCombo: number;
  isRival: boolean;
  isWin: boolean;
  rivalUid: number;
  rivalAcc: number;
  /** tap, hold, dodge, look × perfect, great, miss. */
  counters: [number, number, number, number, number, number, number, number, number, number, number, number];
  playerArena: string;
  serverId: number;
  serverName: string;
  serverCountry: string;
  serverSessionId: string;
  /** The consistency checks it failed on arrival ([]: none). */
  flags: string[];
}

/** An uploaded play before the consistency checks ran: a NewPlayRecord without its flags. */
export type UploadedPlay = Omit<NewPlayRecord, 'flags'>;

export interface StoredRecord {
  id: string;
  acc: number;
  pass: boolean;
  timeMs: number;
  /** When the service accepted it (epoch ms, floored): the time its best was first reached. */
  receivedMs: number;
  /** The consistency checks it failed ([]: none). */
  flags: string[];
  approved: boolean;
  voided: boolean;
}

/** The catalog's row of the uploaded level, as the upload reads it. */
export interface ChartRead {
  constant: number;
  placeholder: boolean;
  notes: number | null;
}

export interface BestRow extends TrackPosition {
  recordId: string;
  rating: number;
  version: number;
}

export interface LockedRating {
  atp: string;
  version: number;
}

/** What an upload reads of the player: rating row (atp null: no counted play), best on the chart, the other charts' top ratings, the chart's constant, the ban check. */
export interface StateRead {
  atp: string | null;
  version: number;
  best: BestRow | null;
  others: number[];
  /** null: the catalog has no row for the level yet. */
  chart: ChartRead | null;
  bans: BanCheck;
}

/**
 * What the one-statement upload (rhythmc_upload_play) answers. 'stored': the record was inserted
 * and, when it counts and beats the best, the best and ATP written. Any other outcome wrote nothing
 * and the upload takes its transactional path: no accepted session, no chart row, a note count the
 * record fails, or the record already stored.
 */
export type OneStatementUpload =
  | { outcome: 'session' | 'chart' | 'notes' | 'duplicate' }
  | {
      outcome: 'stored';
      record: { id: string; receivedMs: number };
      chart: ChartRead;
      /** The player's rating row (version 0, atp null: none, or created by this upload) and best on the chart, under the lock, before this upload's write. */
      previous: { version: number; atp: string | null; best: BestRow | null };
      /** The new best's rating and the new ATP and version; null when nothing was written (not counted, or not better). */
      written: { version: number; atpE4: number; rating: number } | null;
      bans: BanCheck;
    };

/** A recomputed best of one player on one chart. */
export interface ComputedBest extends TrackPosition {
  uid: string;
  levelId: number;
  recordId: string;
  constant: number;
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
  sites: Array<{ uid: string; atp: string }>;
  tracks: Array<{ uid: string; levelId: number; acc: number; firstTimeMs: number }>;
}
