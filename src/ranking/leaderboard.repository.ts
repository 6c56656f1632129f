import { Injectable } from '@nestjs/common';
import { PreparedQueries } from '../database/prepared-queries';
import { ReadQueries } from '../database/read-queries';
import { BOARD_MAX_LIMIT } from './dto/leaderboard.dto';
import { activeBanPredicate } from '../player/active-ban.rule';
import type { BanCheck } from './ranking.types';

/** A row of the site order (decisions.md §5: ATP desc, uid asc) with the player's names. */
export interface SiteRow {
  uid: string;
  /** numeric(10,4) as text. */
  atp: string;
  username: string;
  display_name: string | null;
}

/** A best of the track order (acc desc, first reached asc, uid asc) with the player's names. */
export interface TrackRow {
  uid: string;
  acc: number;
  rating: number;
  username: string;
  display_name: string | null;
}

/** A chart's rank 1 (FIRST_PLACES_SQL). */
export interface FirstPlaceRow extends TrackRow {
  level_id: number;
  chart_name: string;
  first_time_ms: string;
}

/** A window around a player: the player's own row (null when it has none on the board), the rows ahead and behind, each in board order. */
export interface Window<Row> {
  anchor: Row | null;
  ahead: Row[];
  behind: Row[];
}

/**
 * What the rank answer needs of the window's player, read by the window's own statement (one
 * snapshot, as PlayRecordRepository.readLockedState reads it): the rating row, the best on the chart (null
 * for the ATP board) and the ban check. null when the player has no row on the board.
 */
export interface AnchorState {
  version: number;
  atp: string | null;
  best: { acc: number; firstTimeMs: number; recordId: string; version: number } | null;
  bans: BanCheck;
}

/** A row of a window statement: the board row plus the anchor's own columns (null on every other row). */
export type WindowRow<Row> = Row & AnchorColumns;
interface AnchorColumns {
  part: Part;
  my_version: string | null;
  my_atp: string | null;
  first_time_ms: string | null;
  record_id: string | null;
  best_version: string | null;
  self_banned: boolean;
  ban_generation: string;
  db_now: Date;
}

/** Where a row of a window statement belongs: the player, ahead of it, behind it. */
type Part = 0 | 1 | 2;
const ANCHOR: Part = 0;
const AHEAD: Part = 1;
const BEHIND: Part = 2;

export const unbanned = (alias: string) => `NOT ${activeBanPredicate(alias)}`;

/** The site order (decisions.md §5) of player_rating `r`, and the track order of player_chart_best `c`: every board statement sorts by these. */
export const SITE_ORDER = 'r.atp DESC, r.uid ASC';
export const TRACK_ORDER = 'c.acc DESC, c.first_time_ms ASC, c.uid ASC';

/** Select-list columns of the player $n: the ban check of PlayRecordRepository's state read (whether banned, the ban generation, the database clock). */
/** Select-list columns: the ban generation and the database clock the statement saw (BanView.ensure). */
export const BAN_SEEN = '(SELECT generation FROM rank_ban_generation WHERE id = 1) AS ban_generation, now() AS db_now';

const BAN_CHECK = (
  uid: string,
) => `(SELECT ${activeBanPredicate('me_uid')} FROM (SELECT ${uid}::bigint AS uid) AS me_uid) AS self_banned,
  ${BAN_SEEN}`;

/**
 * `select` (ordered) cut to `limit` (a parameter, at most BOARD_MAX_LIMIT) through a constant
 * BOARD_MAX_LIMIT inside. A named statement's generic plan cannot know a `LIMIT $n` and costs it
 * as a tenth of the table (on the site order: a parallel scan, 47 ms instead of 0.15), so
 * PostgreSQL kept planning a custom plan at every call (0.3–1.4 ms, more than running it); with
 * the constant bound the generic plan is the index walk, planned once per connection. The outer
 * limit still stops the walk after `limit` rows.
 */
const boundedLimit = (select: string, limit: string) =>
  `SELECT * FROM (${select}
 LIMIT ${BOARD_MAX_LIMIT}) AS bounded LIMIT ${limit}`;

/**
 * The first $1 unbanned players of the site order: one walk of IDX_player_rating_site
 * (atp DESC, uid ASC), skipping banned players (decisions.md §5: they take no rank).
 */
export const TOP_SITE_SQL = boundedLimit(
  `SELECT r.uid, r.atp, p.username, p.display_name
  FROM player_rating r JOIN player p ON p.uid = r.uid
 WHERE ${unbanned('r')}
 ORDER BY ${SITE_ORDER}`,
  '$1',
);

/**
 * The unbanned players of the set $1 (uids) on the site order, in that order: a scoped board (a
 * party, a friends list), ranked by position. One primary-key probe per uid.
 */
export const SITE_AMONG_SQL = `SELECT r.uid, r.atp, p.username, p.display_name
  FROM unnest($1::bigint[]) AS w(uid) JOIN player_rating r ON r.uid = w.uid JOIN player p ON p.uid = w.uid
 WHERE ${unbanned('r')}
 ORDER BY ${SITE_ORDER}`;

/** The unbanned bests on chart `levelId` (an SQL expression) in board order, with `extra` columns: a walk of IDX_player_chart_best_track. */
const trackOrderSql = (
  levelId: string,
  extra = '',
) => `SELECT c.uid, c.acc, c.rating, p.username, p.display_name${extra}
  FROM player_chart_best c JOIN player p ON p.uid = c.uid
 WHERE c.level_id = ${levelId} AND ${unbanned('c')}
 ORDER BY ${TRACK_ORDER}`;

/** The unbanned bests on chart $1 of the set $2 (uids), in the track order (a scoped chart board). */
export const TRACK_AMONG_SQL = `SELECT c.uid, c.acc, c.rating, p.username, p.display_name
  FROM unnest($2::bigint[]) AS w(uid) JOIN player_chart_best c ON c.uid = w.uid AND c.level_id = $1 JOIN player p ON p.uid = w.uid
 WHERE ${unbanned('c')}
 ORDER BY ${TRACK_ORDER}`;

/** The first $2 unbanned bests on chart $1: one walk of IDX_player_chart_best_track. */
export const TOP_TRACK_SQL = boundedLimit(trackOrderSql('$1'), '$2');

/**
 * Rank 1 of every chart board (every catalog chart but placeholders: TOP_TRACK_SQL's first row,
 * one short walk of the track index per chart), the most recently reached first (the time the
 * service first accepted that best), then by level id; at most $1.
 */
export const FIRST_PLACES_SQL = `SELECT ch.level_id, ch.name AS chart_name, t.uid, t.acc, t.rating, t.username, t.display_name, t.first_time_ms
  FROM chart ch CROSS JOIN LATERAL (${trackOrderSql('ch.level_id', ', c.first_time_ms')} LIMIT 1) AS t
 WHERE NOT ch.placeholder
 ORDER BY t.first_time_ms DESC, ch.level_id ASC
 LIMIT $1`;

/**
 * The player $1 with the $2 nearest unbanned players on each side of the site order, the player's
 * key (ATP) read in the statement. Each side is split where the key's columns change (same ATP
 * and a lower uid, then a higher ATP), so every part is an exact range of IDX_player_rating_site
 * walked from the player outwards, however many players share the ATP: 4 × $2 index entries at
 * most. Ordered by the site order; the caller keeps the $2 nearest of each side. No rows when the
 * player has no rating.
 */
const MY_ATP = '(SELECT atp FROM player_rating WHERE uid = $1)';
export const SITE_WINDOW_SQL = `SELECT w.part, w.uid, w.atp, p.username, p.display_name, w.my_version, ${BAN_CHECK('$1')} FROM (
    (SELECT ${ANCHOR} AS part, r.uid, r.atp, r.version AS my_version FROM player_rating r WHERE r.uid = $1)
    UNION ALL
    (SELECT ${AHEAD}, r.uid, r.atp, NULL FROM player_rating r WHERE r.atp = ${MY_ATP} AND r.uid < $1 AND ${unbanned('r')} ORDER BY r.atp ASC, r.uid DESC LIMIT $2)
    UNION ALL
    (SELECT ${AHEAD}, r.uid, r.atp, NULL FROM player_rating r WHERE r.atp > ${MY_ATP} AND ${unbanned('r')} ORDER BY r.atp ASC, r.uid DESC LIMIT $2)
    UNION ALL
    (SELECT ${BEHIND}, r.uid, r.atp, NULL FROM player_rating r WHERE r.atp = ${MY_ATP} AND r.uid > $1 AND ${unbanned('r')} ORDER BY r.atp DESC, r.uid ASC LIMIT $2)
    UNION ALL
    (SELECT ${BEHIND}, r.uid, r.atp, NULL FROM player_rating r WHERE r.atp < ${MY_ATP} AND ${unbanned('r')} ORDER BY r.atp DESC, r.uid ASC LIMIT $2)
  ) AS w JOIN player p ON p.uid = w.uid
 ORDER BY w.atp DESC, w.uid ASC`;

/** The player's track key on chart $1 ($2 uid). */
const MY_ACC = '(SELECT acc FROM player_chart_best WHERE uid = $2 AND level_id = $1)';
const MY_TIME = '(SELECT first_time_ms FROM player_chart_best WHERE uid = $2 AND level_id = $1)';
/** Ahead of the player on chart $1, nearest first; behind, nearest first. */
const TRACK_AHEAD_ORDER = 'ORDER BY c.acc ASC, c.first_time_ms DESC, c.uid DESC LIMIT $3';
const TRACK_BEHIND_ORDER = 'ORDER BY c.acc DESC, c.first_time_ms ASC, c.uid ASC LIMIT $3';
const TRACK_PART = (part: Part, where: string, order: string) =>
  `(SELECT ${part}, c.uid, c.acc, c.first_time_ms, c.rating, NULL::bigint, NULL::bigint, NULL::numeric, NULL::bigint FROM player_chart_best c WHERE c.level_id = $1 AND ${where} AND ${unbanned('c')} ${order})`;

/**
 * The player $2 on chart $1 with the $3 nearest unbanned bests on each side, in three exact ranges
 * of IDX_player_chart_best_track per side (same acc and first reached, same acc, other acc), as
 * SITE_WINDOW_SQL: at 1M bests on a chart, thousands share 100 %.
 */
export const TRACK_WINDOW_SQL = `SELECT w.part, w.uid, w.acc, w.rating, p.username, p.display_name,
       w.first_time_ms, w.record_id, w.best_version, w.my_atp, w.my_version, ${BAN_CHECK('$2')} FROM (
    (SELECT ${ANCHOR} AS part, c.uid, c.acc, c.first_time_ms, c.rating, c.record_id, c.version AS best_version, r.atp AS my_atp, r.version AS my_version
       FROM player_chart_best c LEFT JOIN player_rating r ON r.uid = c.uid WHERE c.uid = $2 AND c.level_id = $1)
    UNION ALL ${TRACK_PART(AHEAD, `c.acc = ${MY_ACC} AND c.first_time_ms = ${MY_TIME} AND c.uid < $2`, TRACK_AHEAD_ORDER)}
    UNION ALL ${TRACK_PART(AHEAD, `c.acc = ${MY_ACC} AND c.first_time_ms < ${MY_TIME}`, TRACK_AHEAD_ORDER)}
    UNION ALL ${TRACK_PART(AHEAD, `c.acc > ${MY_ACC}`, TRACK_AHEAD_ORDER)}
    UNION ALL ${TRACK_PART(BEHIND, `c.acc = ${MY_ACC} AND c.first_time_ms = ${MY_TIME} AND c.uid > $2`, TRACK_BEHIND_ORDER)}
    UNION ALL ${TRACK_PART(BEHIND, `c.acc = ${MY_ACC} AND c.first_time_ms > ${MY_TIME}`, TRACK_BEHIND_ORDER)}
    UNION ALL ${TRACK_PART(BEHIND, `c.acc < ${MY_ACC}`, TRACK_BEHIND_ORDER)}
  ) AS w JOIN player p ON p.uid = w.uid
 ORDER BY w.acc DESC, w.first_time_ms ASC, w.uid ASC`;

/** The player $1's site rank state alone (SITE_WINDOW_SQL's anchor part): a primary-key read and the ban check. */
export const SITE_ANCHOR_SQL = `SELECT ${ANCHOR} AS part, r.atp, r.version AS my_version, ${BAN_CHECK('$1')} FROM player_rating r WHERE r.uid = $1`;

/** The player $2's rank state on chart $1 alone (TRACK_WINDOW_SQL's anchor part). */
export const TRACK_ANCHOR_SQL = `SELECT ${ANCHOR} AS part, c.acc, c.first_time_ms, c.record_id, c.version AS best_version, r.atp AS my_atp, r.version AS my_version, ${BAN_CHECK('$2')}
  FROM player_chart_best c LEFT JOIN player_rating r ON r.uid = c.uid WHERE c.uid = $2 AND c.level_id = $1`;

/** The site rows of the players $1 (uids), in that order, by primary key, each with its ban check. */
export const SITE_ROWS_SQL = `SELECT r.uid, r.atp, p.username, p.display_name, ${activeBanPredicate('r')} AS banned
  FROM unnest($1::bigint[]) WITH ORDINALITY AS w(uid, n) JOIN player_rating r ON r.uid = w.uid JOIN player p ON p.uid = w.uid
 ORDER BY w.n`;

/** The bests on chart $1 of the players $2 (uids), in that order, by primary key, each with its track key and ban check. */
export const TRACK_ROWS_SQL = `SELECT c.uid, c.acc, c.rating, c.first_time_ms, p.username, p.display_name, ${activeBanPredicate('c')} AS banned
  FROM unnest($2::bigint[]) WITH ORDINALITY AS w(uid, n) JOIN player_chart_best c ON c.uid = w.uid AND c.level_id = $1 JOIN player p ON p.uid = w.uid
 ORDER BY w.n`;

/** A row read by uid for a window answered by the rank index, with what the caller checks against the index. */
export type Checked<Row> = Row & { banned: boolean };
export type CheckedTrackRow = Checked<TrackRow> & { first_time_ms: string };

const rowOf = <Row>(row: Row & AnchorColumns): Row => {
  const {
    part: _p,
    my_version: _v,
    my_atp: _a,
    first_time_ms: _t,
    record_id: _r,
    best_version: _b,
    self_banned: _s,
    ban_generation: _g,
    db_now: _n,
    ...rest
  } = row;
  return rest as Row;
};

/** Splits a window statement's rows (in board order) into the anchor and the `k` nearest on each side. */
export function toWindow<Row>(rows: Array<Row & AnchorColumns>, k: number): Window<Row> {
  const anchor = rows.find((row) => row.part === ANCHOR);
  const ahead = rows.filter((row) => row.part === AHEAD);
  const behind = rows.filter((row) => row.part === BEHIND);
  return {
    anchor: anchor ? rowOf(anchor) : null,
    ahead: ahead.slice(Math.max(0, ahead.length - k)).map(rowOf),
    behind: behind.slice(0, k).map(rowOf),
  };
}

/** The anchor's rank state (null: no anchor row, the player is not on the board). */
function anchorState(
  rows: AnchorColumns[],
  site: boolean,
  atp: (row: AnchorColumns) => string | null,
): AnchorState | null {
  const row = rows.find((candidate) => candidate.part === ANCHOR);
  if (!row) return null;
  return {
    version: Number(row.my_version ?? 0),
    atp: atp(row),
    best: site
      ? null
      : {
          acc: (row as unknown as TrackRow).acc,
          firstTimeMs: Number(row.first_time_ms),
          recordId: row.record_id as string,
          version: Number(row.best_version),
        },
    bans: { selfBanned: row.self_banned, generation: Number(row.ban_generation), dbNowMs: row.db_now.getTime() },
  };
}

/** The top-N statements read at most BOARD_MAX_LIMIT rows (boundedLimit): a caller asking for more is a bug. */
function assertBoardLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > BOARD_MAX_LIMIT)
    throw new Error(`A board's top N is 1 to ${BOARD_MAX_LIMIT}, not ${limit}`);
}

/**
 * The leaderboard reads: the site and track orders of decisions.md §5 over player_rating and
 * player_chart_best (Upload's tables, kept by every upload), with the player module's names and
 * active-ban predicate (read only). Every statement walks one of the two order indexes.
 */
@Injectable()
export class LeaderboardRepository {
  constructor(
    private readonly prepared: PreparedQueries,
    private readonly replica: ReadQueries,
  ) {}

  /**
   * On PostgreSQL a named prepared statement on a pooled connection (PreparedQueries: not on the
   * embedded database nor behind a transaction pooler): planned once per connection. Planning the
   * window statements costs about as much as running them (0.7–0.9 ms against 0.5–1.0 ms, EXPLAIN
   * ANALYZE at 1M players), and PostgreSQL shares the machine's cores. On the primary: the window
   * reads, whose rank and neighbours come from the rank index (the primary's state).
   */
  private read<T>(name: string, text: string, values: unknown[]): Promise<T[]> {
    return this.prepared.run<T>(`leaderboard_${name}`, text, values);
  }

  /** As `read`, on the read replica while it is within its lag bound (ReadQueries): boards read by SQL alone. */
  private lagged<T>(name: string, text: string, values: unknown[]): Promise<T[]> {
    return this.replica.run<T>(`leaderboard_${name}`, text, values);
  }

  /** The top `limit` (1..BOARD_MAX_LIMIT) of the site order. */
  topSite(limit: number): Promise<SiteRow[]> {
    assertBoardLimit(limit);
    return this.lagged<SiteRow>('top_site', TOP_SITE_SQL, [limit]);
  }

  /** The top `limit` (1..BOARD_MAX_LIMIT) of chart `levelId`'s order. */
  topTrack(levelId: number, limit: number): Promise<TrackRow[]> {
    assertBoardLimit(limit);
    return this.lagged<TrackRow>('top_track', TOP_TRACK_SQL, [levelId, limit]);
  }

  firstPlaces(limit: number): Promise<FirstPlaceRow[]> {
    return this.lagged<FirstPlaceRow>('first_places', FIRST_PLACES_SQL, [limit]);
  }

  /** The player's site window and rank state (null without a rating), in one statement. */
  async siteWindow(uid: string, k: number): Promise<{ state: AnchorState | null; window: Window<SiteRow> }> {
    const rows = await this.read<SiteRow & AnchorColumns>('site_window', SITE_WINDOW_SQL, [uid, k]);
    return { state: anchorState(rows, true, (row) => (row as unknown as SiteRow).atp), window: toWindow(rows, k) };
  }

  /** The player's window on chart `levelId` and rank state (null without a best there), in one statement. */
  async trackWindow(
    uid: string,
    levelId: number,
    k: number,
  ): Promise<{ state: AnchorState | null; window: Window<TrackRow> }> {
    const rows = await this.read<TrackRow & AnchorColumns>('track_window', TRACK_WINDOW_SQL, [levelId, uid, k]);
    return { state: anchorState(rows, false, (row) => row.my_atp), window: toWindow(rows, k) };
  }

  /** The player's site rank state alone (null without a rating), for a window answered by the rank index. */
  async siteAnchor(uid: string): Promise<AnchorState | null> {
    const rows = await this.read<AnchorColumns & { atp: string }>('site_anchor', SITE_ANCHOR_SQL, [uid]);
    return anchorState(rows, true, (row) => (row as unknown as SiteRow).atp);
  }

  /** The player's rank state on chart `levelId` alone (null without a best there). */
  async trackAnchor(uid: string, levelId: number): Promise<AnchorState | null> {
    const rows = await this.read<AnchorColumns>('track_anchor', TRACK_ANCHOR_SQL, [levelId, uid]);
    return anchorState(rows, false, (row) => row.my_atp);
  }

  /** The site rows of `uids`, in that order (a uid without a rating is left out). */
  siteRows(uids: string[]): Promise<Array<Checked<SiteRow>>> {
    return this.read<Checked<SiteRow>>('site_rows', SITE_ROWS_SQL, [uids]);
  }

  /** The bests on chart `levelId` of `uids`, in that order (a uid without a best there is left out). */
  trackRows(levelId: number, uids: string[]): Promise<CheckedTrackRow[]> {
    return this.read<CheckedTrackRow>('track_rows', TRACK_ROWS_SQL, [levelId, uids]);
  }

  /** The unbanned players of `uids` (1..SCOPED_MAX_UIDS) with a rating, in the site order. */
  siteAmong(uids: string[]): Promise<SiteRow[]> {
    return this.lagged<SiteRow>('site_among', SITE_AMONG_SQL, [uids]);
  }

  /** The unbanned bests of `uids` on chart `levelId`, in its track order. */
  trackAmong(levelId: number, uids: string[]): Promise<TrackRow[]> {
    return this.lagged<TrackRow>('track_among', TRACK_AMONG_SQL, [levelId, uids]);
  }

  async playerExists(uid: string): Promise<boolean> {
    const rows = await this.read<unknown>('player_exists', 'SELECT 1 FROM player WHERE uid = $1', [uid]);
    return rows.length > 0;
  }
}
