/** 200 of POST /player/upload (decisions.md §5). */
export class UploadResponse {
  /** The player's ATP after this upload, 4 decimals; 0 without any counted play. */
  atp!: number;
  /** Position by ATP desc, uid asc among unbanned players with a counted play; null without one (or while banned). */
  siteRank!: number | null;
  /** Position of the player's best on this chart (acc desc, first reached asc, uid asc); null without one. */
  trackRank!: number | null;
  /** Rating of this play at the chart's current constant, 4 decimals; 0 for a play that does not count (pass: false). */
  playRating!: number;
  /** Whether this play is the player's best on the chart now (decided by the service, never by isNewRecord). */
  personalBest!: boolean;
}

/** 200 of POST /admin/ratings/recompute. */
export class RecomputeResponse {
  /** Players whose bests and ATP were recomputed (every player with a stored record). */
  players!: number;
  /** Per-chart bests after the recompute. */
  bests!: number;
  /** Players whose ATP changed. */
  atpChanged!: number;
  /** Transactions (batches) it took. */
  batches!: number;
}
