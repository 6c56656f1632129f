/** Which plays a review listing shows (docs/decisions.md "Score integrity"). */
export const REVIEW_STATES = ['flagged', 'approved', 'voided', 'all'] as const;
export type ReviewState = (typeof REVIEW_STATES)[number];

/** A play's standing in review: none (no failed check, not voided), flagged (waiting), approved, voided. */
export type ReviewStanding = 'none' | 'flagged' | 'approved' | 'voided';

export interface ReviewFilters {
  state: ReviewState;
  check: string;
  uid: string;
}

/** One page request of the review listing (newest first). */
export interface ReviewFilter {
  state: ReviewState;
  check?: string;
  uid?: string;
  /** Only plays with a smaller id (the id in the previous page's cursor). */
  before?: string;
  /** Rows to read (the page's limit + 1, to know whether there is more). */
  limit: number;
}

/** A stored play as review sees it. */
export interface ReviewedPlay {
  id: string;
  uid: string;
  username: string;
  levelId: number;
  acc: number;
  pass: boolean;
  timeMs: number;
  receivedAt: Date;
  serverId: number;
  flags: string[];
  approved: boolean;
  voided: boolean;
  voidReason: string | null;
  /** The chart is a placeholder (or missing): the play is unranked. */
  placeholder: boolean;
}

/** Perfect, great and miss counts of one group of notes. */
export interface Judged {
  perfect: number;
  great: number;
  miss: number;
}

/** What a reviewer weighs beside the checks: the play as the game server sent it. */
export interface PlayDetail {
  judgements: { tap: Judged; hold: Judged; dodge: Judged; look: Judged };
  maxCombo: number;
  fullCombo: boolean;
  allPerfect: boolean;
  serverName: string;
}
