import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { activeBanPredicate } from '../player/active-ban.rule';
import { BAN_CHECK, BanCheckRow, BestSqlRow, toBanCheck, toBest } from './rank-sql';
import { SitePage, TrackOrderRow, TrackPage } from './rank-source-pages';
import type { BanCheck, BannedKeys, StoredBest, TrackPosition } from './ranking.types';

/** Rows per bytea of a packed read: 2,000 track rows are 56 KB, 112 KB as the hex text the driver reads. */
const PACK_ROWS = 2_000;

/** A row of a chart's order, packed: int4 level, float8 acc, int8 first reached, int8 uid (TrackPage). */
const TRACK_ROW = 'int4send(level_id) || float8send(acc) || int8send(first_time_ms) || int8send(uid)';

/**
 * Keyset pages of the two orders, shared by the in-process load (packed) and the Redis load (rows
 * with versions). Site: $1 rows after (`atp`, $3 uid), or from the start. Charts: the rest of chart
 * $2 after ($3 acc, $4 first reached, $5 uid), then the charts after $2. Each is one range read of
 * its index ((atp DESC, uid); (level_id, acc DESC, first_time_ms, uid)): only the ties at the
 * last key already read are filtered out.
 */
const siteOrderPage = (columns: string, atp: string | null) =>
  `SELECT ${columns} FROM player_rating
    ${atp === null ? '' : `WHERE atp <= ${atp} AND (atp < ${atp} OR uid > $3::bigint)`}
    ORDER BY atp DESC, uid LIMIT $1`;
const restOfChartPage = (columns: string) =>
  `SELECT ${columns} FROM player_chart_best
    WHERE level_id = $2 AND acc <= $3::float8
      AND (acc < $3::float8 OR first_time_ms > $4::bigint OR (first_time_ms = $4::bigint AND uid > $5::bigint))
    ORDER BY acc DESC, first_time_ms, uid LIMIT $1`;
const nextChartsPage = (columns: string) =>
  `SELECT ${columns} FROM player_chart_best WHERE level_id > $2 ORDER BY level_id, acc DESC, first_time_ms, uid LIMIT $1`;
/** Below every level id (int4), for the first page of nextChartsPage. */
const BEFORE_ANY_LEVEL = -2147483648;

/** Site order: a row of player_rating `r` ahead of ($atp, $uid). */
const SITE_AHEAD = (atp: string, uid: string) => `(r.atp > ${atp} OR (r.atp = ${atp} AND r.uid < ${uid}))`;

/** Track order: a row of player_chart_best `c` ahead of ($acc, $time, $uid). */
const TRACK_AHEAD = (acc: string, time: string, uid: string) =>
  `(c.acc > ${acc} OR (c.acc = ${acc} AND (c.first_time_ms < ${time} OR (c.first_time_ms = ${time} AND c.uid < ${uid}))))`;

/**
 * Unbanned rows of chart `level` ahead of ($acc, $time) of player `uid`, the player's own row left
 * out: unbannedAhead's and unbannedTrackAhead's track count (SQL expressions as arguments).
 */
const UNBANNED_TRACK_AHEAD = (level: string, acc: string, time: string, uid: string) =>
  `(SELECT count(*) FROM player_chart_best c
     WHERE c.level_id = ${level} AND ${TRACK_AHEAD(acc, time, uid)}
       AND c.uid <> ${uid} AND NOT ${activeBanPredicate('c')})::int`;

/**
 * What the ranks are made of, outside an upload's own statement: the ban check and the ban
 * generation, the banned players' rank keys (the ban view), unbanned players ahead counted in SQL
 * (when the rank index cannot answer), and pages of ratings and bests (loading the rank index).
 * Reads the bans of the player module through its predicate.
 */
@Injectable()
export class RankSourceRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Whether the player is under an active ban, with the ban generation and the database clock (rank reads outside an upload). */
  async banCheck(uid: string): Promise<BanCheck> {
    const rows = await this.dataSource.manager.query<BanCheckRow[]>(`SELECT ${BAN_CHECK}`, [uid]);
    return toBanCheck(rows[0]);
  }

  /** Marks every instance's view of the banned players' rank keys stale (a banned player's keys changed). */
  async bumpBanGeneration(manager: EntityManager): Promise<void> {
    await manager.query('UPDATE rank_ban_generation SET generation = generation + 1 WHERE id = 1');
  }

  /** The players among `uids` under an active ban. */
  async activelyBanned(uids: string[], manager: EntityManager): Promise<string[]> {
    if (uids.length === 0) return [];
    const rows = await manager.query<Array<{ uid: string }>>(
      `SELECT x.uid FROM unnest($1::bigint[]) AS x(uid) WHERE ${activeBanPredicate('x')}`,
      [uids],
    );
    return rows.map((row) => row.uid);
  }

  /**
   * The rank keys of every player under an active ban, in one statement (one snapshot): their
   * ATP, their bests, the ban generation, and when the first of those bans runs out. O(bans
   * and their charts); read again only when the generation moves or a ban runs out.
   */
  async bannedKeys(): Promise<BannedKeys> {
    const rows = await this.dataSource.manager.query<
      Array<{
        generation: string;
        first_until: Date | null;
        sites: Array<{ uid: string; atp: string; home: number | null }> | null;
        tracks: Array<{
          uid: string;
          level_id: number;
          acc: number;
          first_time_ms: string;
          home: number | null;
        }> | null;
      }>
    >(
      `WITH banned AS (
         SELECT u.uid, u.until FROM player_ban u WHERE u.lifted_at IS NULL AND ${activeBanPredicate('u')}
       )
       SELECT (SELECT generation FROM rank_ban_generation WHERE id = 1) AS generation,
              (SELECT min(until) FROM banned) AS first_until,
              (SELECT json_agg(json_build_object('uid', r.uid::text, 'atp', r.atp::text, 'home', r.home_server_id)) FROM banned x JOIN player_rating r ON r.uid = x.uid) AS sites,
              (SELECT json_agg(json_build_object('uid', c.uid::text, 'level_id', c.level_id, 'acc', c.acc, 'first_time_ms', c.first_time_ms::text,
                                          'home', c.home_server_id))
                 FROM banned x JOIN player_chart_best c ON c.uid = x.uid) AS tracks`,
    );
    const row = rows[0];
    return {
      generation: Number(row.generation),
      firstUntilMs: row.first_until ? row.first_until.getTime() : null,
      sites: row.sites ?? [],
      tracks: (row.tracks ?? []).map((t) => ({
        uid: t.uid,
        levelId: t.level_id,
        acc: t.acc,
        firstTimeMs: Number(t.first_time_ms),
        home: t.home,
      })),
    };
  }

  /**
   * Unbanned players ahead, counted in SQL: exact, but it walks every row ahead (O(rank)). Used
   * when the rank index cannot answer, and by the tests as the reference. The player's own rows
   * never count: when a later upload of the player committed first, `atp`/`best` are an older
   * state and the player's newer row would be ahead of it (the indexes leave it out too).
   */
  async unbannedAhead(
    uid: string,
    atp: string | null,
    levelId: number,
    best: TrackPosition | null,
  ): Promise<{ siteAhead: number; trackAhead: number }> {
    const rows = await this.dataSource.manager.query<Array<{ site_ahead: number; track_ahead: number }>>(
      `SELECT (SELECT count(*) FROM player_rating r
                WHERE $2::numeric IS NOT NULL AND ${SITE_AHEAD('$2::numeric', '$1::bigint')} AND r.uid <> $1::bigint
                  AND NOT ${activeBanPredicate('r')})::int AS site_ahead,
              CASE WHEN $4::float8 IS NULL THEN 0
                   ELSE ${UNBANNED_TRACK_AHEAD('$3', '$4::float8', '$5::bigint', '$1::bigint')} END AS track_ahead`,
      [uid, atp, levelId, best?.acc ?? null, best?.firstTimeMs ?? null],
    );
    return { siteAhead: rows[0].site_ahead, trackAhead: rows[0].track_ahead };
  }

  /**
   * unbannedAhead's track count for several bests of player `uid` at once (a profile's, while the
   * rank index cannot answer): one statement, one count a best, in the order given.
   */
  async unbannedTrackAhead(
    uid: string,
    bests: ReadonlyArray<{ levelId: number; best: TrackPosition }>,
  ): Promise<number[]> {
    if (bests.length === 0) return [];
    const rows = await this.dataSource.manager.query<Array<{ track_ahead: number }>>(
      `SELECT ${UNBANNED_TRACK_AHEAD('b.level_id', 'b.acc', 'b.first_time_ms', '$1::bigint')} AS track_ahead
         FROM unnest($2::int[], $3::float8[], $4::bigint[]) WITH ORDINALITY AS b(level_id, acc, first_time_ms, n)
        ORDER BY b.n`,
      [
        uid,
        bests.map((read) => read.levelId),
        bests.map((read) => read.best.acc),
        bests.map((read) => read.best.firstTimeMs),
      ],
    );
    return rows.map((row) => row.track_ahead);
  }

  /**
   * One page of the site order (ATP descending, uid ascending) after `after` (null at the start):
   * how the in-process index streams its load, packed (SitePage). The index on (atp DESC, uid)
   * serves it; only the ties at after's ATP already read are filtered out.
   */
  async pageSiteOrder(after: { atpE4: number; uid: number } | null, limit: number): Promise<SitePage> {
    return new SitePage(
      await this.packed(
        'int8send((atp * 10000)::bigint) || int8send(uid)',
        siteOrderPage('atp, uid', after === null ? null : '$2::numeric / 10000'),
        'atp DESC, uid',
        after === null ? [limit] : [limit, after.atpE4, after.uid],
      ),
    );
  }

  /**
   * One page of the track orders: chart by chart (level ascending), each in its order (acc
   * descending, first reached ascending, uid ascending), after `after` (null at the start), packed
   * (TrackPage). Two range reads of the index on (level_id, acc DESC, first_time_ms, uid): the rest
   * of the current chart (only its ties at after's acc already read are filtered out), then the
   * next charts.
   */
  async pageTrackOrder(after: TrackOrderRow | null, limit: number): Promise<TrackPage> {
    const parts: Buffer[] = [];
    if (after !== null) {
      parts.push(
        ...(await this.packed(
          TRACK_ROW,
          restOfChartPage('level_id, acc, first_time_ms, uid'),
          'acc DESC, first_time_ms, uid',
          [limit, after.levelId, after.acc, after.firstTimeMs, after.uid],
        )),
      );
    }
    const count = new TrackPage(parts).count;
    if (count < limit) {
      parts.push(
        ...(await this.packed(
          TRACK_ROW,
          nextChartsPage('level_id, acc, first_time_ms, uid'),
          'level_id, acc DESC, first_time_ms, uid',
          [limit - count, after?.levelId ?? BEFORE_ANY_LEVEL],
        )),
      );
    }
    return new TrackPage(parts);
  }

  /**
   * Which database and schema this is, for a snapshot: the database's oid and name, the last
   * migration applied, and the change watermark now (a snapshot from later than now is not this
   * database's).
   */
  async snapshotIdentity(): Promise<{ database: string; migration: string; watermark: string }> {
    const rows = await this.dataSource.manager.query<Array<{ database: string; migration: string; watermark: string }>>(
      `SELECT (SELECT oid::text || ':' || datname FROM pg_database WHERE datname = current_database()) AS database,
              (SELECT name FROM migrations ORDER BY id DESC LIMIT 1) AS migration,
              (SELECT (CASE WHEN is_called THEN last_value ELSE last_value - 1 END)::text FROM rank_change_seq) AS watermark`,
    );
    return rows[0];
  }

  /**
   * What the Redis rank index is checked against (RedisIndexBinding): this database's identity
   * (`database_identity`'s id and the database's oid: a copy made with CREATE DATABASE … TEMPLATE
   * or restored into a new database is another one), the last version drawn from
   * rank_version_seq, and the rating version of player `uid` (null: no row, or no uid asked).
   */
  async rankIndexOrigin(uid: string | null): Promise<{ database: string; sequence: string; version: string | null }> {
    const rows = await this.dataSource.manager.query<
      Array<{ database: string; sequence: string; version: string | null }>
    >(
      `SELECT (SELECT id::text FROM database_identity LIMIT 1) || '/' ||
              (SELECT oid::text FROM pg_database WHERE datname = current_database()) AS database,
              (SELECT (CASE WHEN is_called THEN last_value ELSE last_value - 1 END)::text FROM rank_version_seq) AS sequence,
              (SELECT version::text FROM player_rating WHERE uid = $1::bigint) AS version`,
      [uid],
    );
    return rows[0];
  }

  /**
   * The change watermark alone (as snapshotIdentity reads it): every rating row written or deleted
   * so far has a change_seq at or below it, committed or still in flight.
   */
  async changeWatermark(): Promise<string> {
    const rows = await this.dataSource.manager.query<Array<{ watermark: string }>>(
      `SELECT (CASE WHEN is_called THEN last_value ELSE last_value - 1 END)::text AS watermark FROM rank_change_seq`,
    );
    return rows[0].watermark;
  }

  /** The players whose rank keys changed after `watermark` (rating rows written or deleted), at most `limit` + 1 of them. */
  async changedSince(watermark: string, limit: number): Promise<string[]> {
    const rows = await this.dataSource.manager.query<Array<{ uid: string }>>(
      `SELECT uid FROM player_rating WHERE change_seq > $1::bigint
       UNION SELECT uid FROM rank_change_tombstone WHERE change_seq > $1::bigint
       LIMIT $2`,
      [watermark, limit + 1],
    );
    return rows.map((row) => row.uid);
  }

  /** The current rank keys of the players `uids`: their ATP and their bests (packed). */
  async rankKeysOf(uids: string[]): Promise<{ sites: SitePage; tracks: TrackPage }> {
    const sites = await this.packed(
      'int8send((atp * 10000)::bigint) || int8send(uid)',
      'SELECT atp, uid FROM player_rating WHERE uid = ANY($1::bigint[])',
      'uid',
      [uids],
    );
    const tracks = await this.packed(
      TRACK_ROW,
      'SELECT level_id, acc, first_time_ms, uid FROM player_chart_best WHERE uid = ANY($1::bigint[])',
      'uid, level_id',
      [uids],
    );
    return { sites: new SitePage(sites), tracks: new TrackPage(tracks) };
  }

  /** How many rating rows and bests there are (a loaded index must hold as many). */
  async rankRowCounts(): Promise<{ ratings: number; bests: number }> {
    const rows = await this.dataSource.manager.query<Array<{ ratings: number; bests: number }>>(
      `SELECT (SELECT count(*) FROM player_rating)::int AS ratings, (SELECT count(*) FROM player_chart_best)::int AS bests`,
    );
    return rows[0];
  }

  /**
   * The rows of `select` (in `order`, over its columns) as `row` bytes, concatenated: one bytea per
   * PACK_ROWS rows, so that each field the driver reads stays a small string (below V8's
   * large-object size) and a page leaves only short-lived garbage, not an object per row.
   */
  private async packed(row: string, select: string, order: string, parameters: unknown[]): Promise<Buffer[]> {
    const rows = await this.dataSource.manager.query<Array<{ rows: Buffer }>>(
      `SELECT string_agg(b, ''::bytea ORDER BY n) AS rows
         FROM (SELECT row_number() OVER (ORDER BY ${order}) AS n, ${row} AS b FROM (${select}) AS page) AS numbered
        GROUP BY (n - 1) / ${PACK_ROWS} ORDER BY (n - 1) / ${PACK_ROWS}`,
      parameters,
    );
    return rows.map((packed) => packed.rows);
  }

  /**
   * One page of ratings with their versions in the site order (ATP descending, uid ascending) after
   * `after` (null at the start): how the Redis index loads, in order, so that its leaves fill up.
   * The index on (atp DESC, uid) serves it.
   */
  async pageRatingsInSiteOrder(
    after: { atp: string; uid: string } | null,
    limit: number,
  ): Promise<Array<{ uid: string; atp: string; version: number }>> {
    const rows = await this.dataSource.manager.query<Array<{ uid: string; atp: string; version: string }>>(
      siteOrderPage('uid, atp, version', after === null ? null : '$2::numeric'),
      after === null ? [limit] : [limit, after.atp, after.uid],
    );
    return rows.map((row) => ({ uid: row.uid, atp: row.atp, version: Number(row.version) }));
  }

  /**
   * One page of bests with their versions in the track orders, chart by chart (as pageTrackOrder:
   * the rest of the current chart, then the next charts), for the Redis index's ordered load.
   */
  async pageBestsInTrackOrder(after: StoredBest | null, limit: number): Promise<StoredBest[]> {
    type Row = BestSqlRow & { uid: string; level_id: number };
    const columns = 'uid, level_id, acc, first_time_ms, record_id, rating, version';
    const rows: Row[] = [];
    if (after !== null) {
      rows.push(
        ...(await this.dataSource.manager.query<Row[]>(restOfChartPage(columns), [
          limit,
          after.levelId,
          after.acc,
          after.firstTimeMs,
          after.uid,
        ])),
      );
    }
    if (rows.length < limit) {
      rows.push(
        ...(await this.dataSource.manager.query<Row[]>(nextChartsPage(columns), [
          limit - rows.length,
          after?.levelId ?? BEFORE_ANY_LEVEL,
        ])),
      );
    }
    return rows.map((row) => ({ uid: row.uid, levelId: row.level_id, ...toBest(row) }));
  }
}
