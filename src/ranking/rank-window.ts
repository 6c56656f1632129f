import type { IndexWindow, RankKey } from './rank-index/rank-index';

/** Entries read beyond k on each side, so that a few banned neighbours need no second read. */
export const WINDOW_MARGIN = 8;
/** Reads of the index per window (the span doubles each time); then the caller answers from SQL. */
export const WINDOW_READS = 4;

/** Where a window's keys come from: the rank index and this instance's ban view. */
export interface WindowSource {
  /** One snapshot of the index: up to `span` entries on each side of the player (null: the index cannot answer). */
  read(span: number): Promise<IndexWindow | null>;
  /** Whether the player at `key` is under an active ban (they take no rank and are not shown). */
  banned(key: RankKey): boolean;
  /** The player's rank from the index position (the banned players ahead subtracted). */
  rank(position: number): number;
}

/** A window answered by the index: the player's rank and the keys of its k nearest unbanned neighbours on each side, in board order. */
export interface RankWindow {
  rank: number;
  ahead: RankKey[];
  behind: RankKey[];
}

/**
 * The k nearest unbanned neighbours on each side of a player, from the rank index: reads k + 8
 * entries on each side and leaves banned players out; a side with fewer than k left that did not
 * reach the end of the board is read again with twice the span, at most WINDOW_READS reads in all.
 * null when the index cannot answer or too many neighbours are banned: the caller answers from SQL.
 * The rank and the ban filter are taken right after the read, with no await between them, so they
 * see one state of the ban view.
 */
export async function readRankWindow(source: WindowSource, k: number): Promise<RankWindow | null> {
  for (let read = 0, span = k + WINDOW_MARGIN; read < WINDOW_READS; read++, span *= 2) {
    const window = await source.read(span);
    if (window === null) return null;
    const ahead = window.ahead.filter((key) => !source.banned(key));
    const behind = window.behind.filter((key) => !source.banned(key));
    // A side shorter than the span reached the top or the bottom of the board.
    const aheadDone = ahead.length >= k || window.ahead.length < span;
    const behindDone = behind.length >= k || window.behind.length < span;
    if (aheadDone && behindDone)
      return {
        rank: source.rank(window.position),
        ahead: ahead.slice(Math.max(0, ahead.length - k)),
        behind: behind.slice(0, k),
      };
  }
  return null;
}
