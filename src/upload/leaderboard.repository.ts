import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { activeBanPredicate } from '../player/player.repository';
import type { TrackPosition } from './upload.types';

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

/** A window around a player: the player's own row (null when it is gone), the rows ahead and behind, each in board order. */
export interface Window<Row> {
  anchor: Row | null;
  ahead: Row[];
  behind: Row[];
}

/** Where a row of a window statement belongs. */
type Part = 0 | 1 | 2;
const ANCHOR: Part = 0;
const AHEAD: Part = 1;

const unbanned = (alias: string) => `NOT ${activeBanPredicate(alias)}`;

/**
 * The first $1 unbanned players of the site order: one walk of IDX_player_rating_site
 * (atp DESC, uid ASC), skipping banned players (decisions.md §5: they take no rank).
 */
export const TOP_SITE_SQL = `SELECT r.uid, r.atp, p.username, p.display_name
  FROM player_rating r JOIN player p ON p.uid = r.uid
 WHERE ${unbanned('r')}
 ORDER BY r.atp DESC, r.uid ASC
 LIMIT $1`;

/** The first $2 unbanned bests on chart $1: one walk of IDX_player_chart_best_track. */
export const TOP_TRACK_SQL = `SELECT c.uid, c.acc, c.rating, p.username, p.display_name
  FROM player_chart_best c JOIN player p ON p.uid = c.uid
 WHERE c.level_id = $1 AND ${unbanned('c')}
 ORDER BY c.acc DESC, c.first_time_ms ASC, c.uid ASC
 LIMIT $2`;

/**
 * The player $2 (site key ATP $1) with the $3 nearest unbanned players on each side. Each side is
 * split where the key's columns change (same ATP and a lower uid, then a higher ATP), so every
 * part is an exact range of IDX_player_rating_site walked from the player outwards, however many
 * players share the ATP: 4 × $3 index entries at most. Ordered by the site order; the caller keeps
 * the $3 nearest of each side.
 */
export const SITE_WINDOW_SQL = `SELECT w.part, w.uid, w.atp, p.username, p.display_name FROM (
    (SELECT ${ANCHOR} AS part, r.uid, r.atp FROM player_rating r WHERE r.uid = $2)
    UNION ALL
    (SELECT ${AHEAD}, r.uid, r.atp FROM player_rating r WHERE r.atp = $1 AND r.uid < $2 AND ${unbanned('r')} ORDER BY r.atp ASC, r.uid DESC LIMIT $3)
    UNION ALL
    (SELECT ${AHEAD}, r.uid, r.atp FROM player_rating r WHERE r.atp > $1 AND ${unbanned('r')} ORDER BY r.atp ASC, r.uid DESC LIMIT $3)
    UNION ALL
    (SELECT 2, r.uid, r.atp FROM player_rating r WHERE r.atp = $1 AND r.uid > $2 AND ${unbanned('r')} ORDER BY r.atp DESC, r.uid ASC LIMIT $3)
    UNION ALL
    (SELECT 2, r.uid, r.atp FROM player_rating r WHERE r.atp < $1 AND ${unbanned('r')} ORDER BY r.atp DESC, r.uid ASC LIMIT $3)
  ) AS w JOIN player p ON p.uid = w.uid
 ORDER BY w.atp DESC, w.uid ASC`;

/** Ahead of (acc $2, first reached $3, uid $4) on chart $1, nearest first; behind, nearest first. */
const TRACK_AHEAD_ORDER = 'ORDER BY c.acc ASC, c.first_time_ms DESC, c.uid DESC LIMIT $5';
const TRACK_BEHIND_ORDER = 'ORDER BY c.acc DESC, c.first_time_ms ASC, c.uid ASC LIMIT $5';
const TRACK_PART = (part: Part | 2, where: string, order: string) =>
  `(SELECT ${part}, c.uid, c.acc, c.first_time_ms, c.rating FROM player_chart_best c WHERE c.level_id = $1 AND ${where} AND ${unbanned('c')} ${order})`;

/**
 * The player $4 on chart $1 (track key acc $2, first reached $3) with the $5 nearest unbanned bests
 * on each side, in three exact ranges of IDX_player_chart_best_track per side (same acc and time,
 * same acc, other acc), as SITE_WINDOW_SQL: at 1M bests on a chart, thousands may share 100 %.
 */
export const TRACK_WINDOW_SQL = `SELECT w.part, w.uid, w.acc, w.rating, p.username, p.display_name FROM (
    (SELECT ${ANCHOR} AS part, c.uid, c.acc, c.first_time_ms, c.rating FROM player_chart_best c WHERE c.uid = $4 AND c.level_id = $1)
    UNION ALL ${TRACK_PART(AHEAD, 'c.acc = $2 AND c.first_time_ms = $3 AND c.uid < $4', TRACK_AHEAD_ORDER)}
    UNION ALL ${TRACK_PART(AHEAD, 'c.acc = $2 AND c.first_time_ms < $3', TRACK_AHEAD_ORDER)}
    UNION ALL ${TRACK_PART(AHEAD, 'c.acc > $2', TRACK_AHEAD_ORDER)}
    UNION ALL ${TRACK_PART(2, 'c.acc = $2 AND c.first_time_ms = $3 AND c.uid > $4', TRACK_BEHIND_ORDER)}
    UNION ALL ${TRACK_PART(2, 'c.acc = $2 AND c.first_time_ms > $3', TRACK_BEHIND_ORDER)}
    UNION ALL ${TRACK_PART(2, 'c.acc < $2', TRACK_BEHIND_ORDER)}
  ) AS w JOIN player p ON p.uid = w.uid
 ORDER BY w.acc DESC, w.first_time_ms ASC, w.uid ASC`;

/** Splits a window statement's rows (in board order) into the anchor and the `k` nearest on each side. */
function toWindow<Row extends { part: Part | 2 }>(rows: Row[], k: number): Window<Omit<Row, 'part'>> {
  const strip = ({ part: _part, ...row }: Row): Omit<Row, 'part'> => row;
  const anchor = rows.find((row) => row.part === ANCHOR);
  const ahead = rows.filter((row) => row.part === AHEAD);
  const behind = rows.filter((row) => row.part !== ANCHOR && row.part !== AHEAD);
  return { anchor: anchor ? strip(anchor) : null, ahead: ahead.slice(Math.max(0, ahead.length - k)).map(strip), behind: behind.slice(0, k).map(strip) };
}

/**
 * The leaderboard reads: the site and track orders of decisions.md §5 over player_rating and
 * player_chart_best (Upload's tables, kept by every upload), with the player module's names and
 * active-ban predicate (read only). Every statement walks one of the two order indexes.
 */
@Injectable()
export class LeaderboardRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  topSite(limit: number): Promise<SiteRow[]> {
    return this.dataSource.query<SiteRow[]>(TOP_SITE_SQL, [limit]);
  }

  topTrack(levelId: number, limit: number): Promise<TrackRow[]> {
    return this.dataSource.query<TrackRow[]>(TOP_TRACK_SQL, [levelId, limit]);
  }

  async siteWindow(uid: string, atp: string, k: number): Promise<Window<SiteRow>> {
    return toWindow(await this.dataSource.query<Array<SiteRow & { part: Part }>>(SITE_WINDOW_SQL, [atp, uid, k]), k);
  }

  async trackWindow(uid: string, levelId: number, best: TrackPosition, k: number): Promise<Window<TrackRow>> {
    const rows = await this.dataSource.query<Array<TrackRow & { part: Part }>>(TRACK_WINDOW_SQL, [levelId, best.acc, best.firstTimeMs, uid, k]);
    return toWindow(rows, k);
  }

  async chartExists(levelId: number): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>('SELECT 1 FROM chart WHERE level_id = $1', [levelId]);
    return rows.length > 0;
  }

  async playerExists(uid: string): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>('SELECT 1 FROM player WHERE uid = $1', [uid]);
    return rows.length > 0;
  }
}
