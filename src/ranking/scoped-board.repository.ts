import { Injectable } from '@nestjs/common';
import { PreparedQueries } from '../database/prepared-queries';
import { ReadQueries } from '../database/read-queries';
import { BOARD_MAX_LIMIT } from './dto/leaderboard.dto';
import { BAN_SEEN, SITE_ORDER, SiteRow, TRACK_ORDER, TrackRow, unbanned } from './leaderboard.repository';

/**
 * Boards scoped to a set of game servers (a server group, a country; docs/decisions.md "Scoped
 * boards: groups and countries"): the global boards' players whose home server is in the set,
 * in the global order, with the global ban rule. Each statement walks the per-home-server order
 * indexes (IDX_player_rating_home: home_server_id, atp DESC, uid; IDX_player_chart_best_home:
 * level_id, home_server_id, acc DESC, first_time_ms, uid) once per server of the scope ($1, int[])
 * and merges: a top N is N rows per server at most; a window's rank is the sum over the servers
 * of the index range counts of the rows ahead, banned players included (index only: no ban probe
 * per row; as costly as the rows ahead in the scope), from which the caller subtracts the banned
 * players ahead in the scope (BanView.bannedAheadIn, at the ban generation the statement saw); the
 * neighbours are the k nearest unbanned of each server on each side.
 */

/**
 * A row of a scoped window: the board row, which part it is (0 the player, 1 ahead, 2 behind), and
 * on the player's row the count of rows ahead in the scope (banned players included), the ban
 * generation and the database clock the statement saw (null on the other rows).
 */
export type ScopedWindowRow<Row> = Row & {
  part: 0 | 1 | 2;
  ahead: string | null;
  ban_generation: string | null;
  db_now: Date | null;
};

/** The first $2 (≤ BOARD_MAX_LIMIT) unbanned players of the site order whose home server is in $1 (names read for those only). */
export const SCOPED_TOP_SITE_SQL = `SELECT r.uid, r.atp, p.username, p.display_name FROM (
  SELECT r.uid, r.atp FROM (SELECT DISTINCT unnest($1::int[]) AS id) AS s
  CROSS JOIN LATERAL (SELECT r.uid, r.atp FROM player_rating r
                       WHERE r.home_server_id = s.id AND ${unbanned('r')}
                       ORDER BY ${SITE_ORDER} LIMIT $2) AS r
   ORDER BY ${SITE_ORDER} LIMIT $2) AS r
  JOIN player p ON p.uid = r.uid
 ORDER BY ${SITE_ORDER}`;

/** The first $3 unbanned bests on chart $1 whose player's home server is in $2. */
export const SCOPED_TOP_TRACK_SQL = `SELECT c.uid, c.acc, c.rating, p.username, p.display_name FROM (
  SELECT c.uid, c.acc, c.first_time_ms, c.rating FROM (SELECT DISTINCT unnest($2::int[]) AS id) AS s
  CROSS JOIN LATERAL (SELECT c.uid, c.acc, c.first_time_ms, c.rating FROM player_chart_best c
                       WHERE c.level_id = $1 AND c.home_server_id = s.id AND ${unbanned('c')}
                       ORDER BY ${TRACK_ORDER} LIMIT $3) AS c
   ORDER BY ${TRACK_ORDER} LIMIT $3) AS c
  JOIN player p ON p.uid = c.uid
 ORDER BY ${TRACK_ORDER}`;

/** One part of a window, per server of the scope: `where` (the range), nearest first by `order`, at most $k. */
const sitePart = (part: 1 | 2, where: string, order: string, k: string) =>
  `SELECT ${part} AS part, x.uid, x.atp FROM s CROSS JOIN me CROSS JOIN LATERAL (
     SELECT r.uid, r.atp FROM player_rating r
      WHERE r.home_server_id = s.id AND ${where} AND ${unbanned('r')} ORDER BY ${order} LIMIT ${k}) AS x`;
/** Rows ahead on one server of the scope, banned included: an index-only range count. */
const siteCount = (where: string) =>
  `(SELECT count(*) FROM player_rating r WHERE r.home_server_id = s.id AND ${where})`;
const SITE_NEAREST_AHEAD = 'r.atp ASC, r.uid DESC';

/**
 * The player $2 on the site board of the servers $1, with its count of players ahead in the
 * scope (banned included: its rank − 1 once the banned ones ahead are taken off) and the $3
 * nearest unbanned on each side (per server: the player's ATP tie, then the other ATPs, each an
 * exact range of IDX_player_rating_home). No rows when the player has no rating, is banned, or has
 * a home outside $1.
 */
export const SCOPED_SITE_WINDOW_SQL = `WITH s AS (SELECT DISTINCT unnest($1::int[]) AS id),
  me AS (SELECT r.uid, r.atp FROM player_rating r
          WHERE r.uid = $2 AND r.home_server_id = ANY ($1::int[]) AND ${unbanned('r')})
SELECT w.part, w.uid, w.atp, p.username, p.display_name, w.ahead, w.ban_generation, w.db_now FROM (
    SELECT 0 AS part, me.uid, me.atp,
           (SELECT sum(${siteCount('r.atp > me.atp')} + ${siteCount('r.atp = me.atp AND r.uid < me.uid')}) FROM s)::text AS ahead,
           ${BAN_SEEN}
      FROM me
    UNION ALL SELECT a.*, NULL, NULL, NULL FROM (${sitePart(1, 'r.atp = me.atp AND r.uid < me.uid', SITE_NEAREST_AHEAD, '$3')}) AS a
    UNION ALL SELECT a.*, NULL, NULL, NULL FROM (${sitePart(1, 'r.atp > me.atp', SITE_NEAREST_AHEAD, '$3')}) AS a
    UNION ALL SELECT b.*, NULL, NULL, NULL FROM (${sitePart(2, 'r.atp = me.atp AND r.uid > me.uid', SITE_ORDER, '$3')}) AS b
    UNION ALL SELECT b.*, NULL, NULL, NULL FROM (${sitePart(2, 'r.atp < me.atp', SITE_ORDER, '$3')}) AS b
  ) AS w JOIN player p ON p.uid = w.uid
 ORDER BY w.atp DESC, w.uid ASC`;

const trackPart = (part: 1 | 2, where: string, order: string) =>
  `SELECT ${part} AS part, x.uid, x.acc, x.first_time_ms, x.rating FROM s CROSS JOIN me CROSS JOIN LATERAL (
     SELECT c.uid, c.acc, c.first_time_ms, c.rating FROM player_chart_best c
      WHERE c.level_id = $1 AND c.home_server_id = s.id AND ${where} AND ${unbanned('c')} ORDER BY ${order} LIMIT $4) AS x`;
const trackCount = (where: string) =>
  `(SELECT count(*) FROM player_chart_best c WHERE c.level_id = $1 AND c.home_server_id = s.id AND ${where})`;
const TRACK_NEAREST_AHEAD = 'c.acc ASC, c.first_time_ms DESC, c.uid DESC';
/** Ahead of the player on the track order, as three exact index ranges: same acc and time, same acc, higher acc. */
const TRACK_AHEAD = [
  'c.acc = me.acc AND c.first_time_ms = me.first_time_ms AND c.uid < me.uid',
  'c.acc = me.acc AND c.first_time_ms < me.first_time_ms',
  'c.acc > me.acc',
];
const TRACK_BEHIND = [
  'c.acc = me.acc AND c.first_time_ms = me.first_time_ms AND c.uid > me.uid',
  'c.acc = me.acc AND c.first_time_ms > me.first_time_ms',
  'c.acc < me.acc',
];

/** The player $3 on chart $1's board of the servers $2, as SCOPED_SITE_WINDOW_SQL ($4 neighbours a side). */
export const SCOPED_TRACK_WINDOW_SQL = `WITH s AS (SELECT DISTINCT unnest($2::int[]) AS id),
  me AS (SELECT c.uid, c.acc, c.first_time_ms, c.rating FROM player_chart_best c
          WHERE c.level_id = $1 AND c.uid = $3 AND c.home_server_id = ANY ($2::int[]) AND ${unbanned('c')})
SELECT w.part, w.uid, w.acc, w.first_time_ms, w.rating, p.username, p.display_name, w.ahead, w.ban_generation, w.db_now FROM (
    SELECT 0 AS part, me.uid, me.acc, me.first_time_ms, me.rating,
           (SELECT sum(${TRACK_AHEAD.map(trackCount).join(' + ')}) FROM s)::text AS ahead,
           ${BAN_SEEN}
      FROM me
    ${TRACK_AHEAD.map((where) => `UNION ALL SELECT a.*, NULL, NULL, NULL FROM (${trackPart(1, where, TRACK_NEAREST_AHEAD)}) AS a`).join('\n    ')}
    ${TRACK_BEHIND.map((where) => `UNION ALL SELECT b.*, NULL, NULL, NULL FROM (${trackPart(2, where, TRACK_ORDER)}) AS b`).join('\n    ')}
  ) AS w JOIN player p ON p.uid = w.uid
 ORDER BY w.acc DESC, w.first_time_ms ASC, w.uid ASC`;

/** The servers whose registered country is $1 (exactly). */
export const COUNTRY_SERVERS_SQL = 'SELECT id FROM game_server WHERE country = $1';

function assertLimit(n: number): void {
  if (!Number.isInteger(n) || n < 0 || n > BOARD_MAX_LIMIT)
    throw new Error(`A scoped board reads 0 to ${BOARD_MAX_LIMIT} rows, not ${n}`);
}

/** The scoped boards' reads (boards on the read replica within its lag bound, as the global top N; the scope's servers on the primary, so a regrouping applies at once). */
@Injectable()
export class ScopedBoardRepository {
  constructor(
    private readonly prepared: PreparedQueries,
    private readonly replica: ReadQueries,
  ) {}

  /** The servers registered in `country` (exactly); [] when none. Groups are the server module's (ServerService.groupServers). */
  async countryServers(country: string): Promise<number[]> {
    const rows = await this.prepared.run<{ id: number }>('scoped_country_servers', COUNTRY_SERVERS_SQL, [country]);
    return rows.map((row) => Number(row.id));
  }

  topSite(servers: number[], limit: number): Promise<SiteRow[]> {
    assertLimit(limit);
    return this.replica.run<SiteRow>('scoped_top_site', SCOPED_TOP_SITE_SQL, [servers, limit]);
  }

  topTrack(levelId: number, servers: number[], limit: number): Promise<TrackRow[]> {
    assertLimit(limit);
    return this.replica.run<TrackRow>('scoped_top_track', SCOPED_TOP_TRACK_SQL, [levelId, servers, limit]);
  }

  siteWindow(servers: number[], uid: string, k: number): Promise<Array<ScopedWindowRow<SiteRow>>> {
    assertLimit(k);
    return this.replica.run<ScopedWindowRow<SiteRow>>('scoped_site_window', SCOPED_SITE_WINDOW_SQL, [servers, uid, k]);
  }

  trackWindow(
    levelId: number,
    servers: number[],
    uid: string,
    k: number,
  ): Promise<Array<ScopedWindowRow<TrackRow & { first_time_ms: string }>>> {
    assertLimit(k);
    return this.replica.run<ScopedWindowRow<TrackRow & { first_time_ms: string }>>(
      'scoped_track_window',
      SCOPED_TRACK_WINDOW_SQL,
      [levelId, servers, uid, k],
    );
  }
}
