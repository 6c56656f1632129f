import type { UploadSessionRefusal } from '../auth/upload-session.rule';
import type { BanCheck, BestRow, TrackPosition } from '../ranking';

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

/** Why an upload is refused (401): the upload-session rule's reason, or the uid is an erased player's. */
export type UploadRefusal = UploadSessionRefusal | 'erased';

/**
 * What the one-statement upload (rhythmc_upload_record) answers. 'stored': the record was inserted
 * and, when it counts and beats the best, the best and ATP written. 'refused': the player session
 * is refused (or the uid erased), the reason to word. Any other outcome wrote nothing and the
 * upload takes its transactional path: no chart row, a note count the record fails, or the record
 * already stored.
 */
export type OneStatementUpload =
  | { outcome: 'refused'; refusal: UploadRefusal }
  | { outcome: 'chart' | 'notes' | 'duplicate' }
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
