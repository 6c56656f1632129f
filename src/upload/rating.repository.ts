import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { COUNTED_RECORD } from './counted-record.rule';
import { PreparedQueries } from '../database/prepared-queries';
import { BestSqlRow, EPOCH_MS, toBest } from '../ranking/rank-sql';
import type { ComputedBest, LockedRating } from './upload.types';
import type { BestRow, StoredBest } from '../ranking';

/**
 * Ratings and per-chart bests: the rating-row locks, the upload's best/ATP write, rank versions,
 * and the recompute's reads (players with records, counted bests from the records) and bulk writes.
 * Reads the chart constants of the catalog for the recompute; writes only its own tables.
 */
@Injectable()
export class RatingRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly statements: PreparedQueries,
  ) {}

  /** Creates the rating row of a player's first counted play (ATP 0, version 0) and locks it. */
  async createAndLockRating(uid: string, manager: EntityManager): Promise<LockedRating> {
    await manager.query(
      'INSERT INTO player_rating (uid, atp, version) VALUES ($1, 0, 0) ON CONFLICT (uid) DO NOTHING',
      [uid],
    );
    const rows = await manager.query<Array<{ atp: string; version: string }>>(
      'SELECT atp, version FROM player_rating WHERE uid = $1 FOR UPDATE',
      [uid],
    );
    return { atp: rows[0].atp, version: Number(rows[0].version) };
  }

  /**
   * Writes the player's new best on the chart and the new ATP, one statement; both take the next
   * version of rank_version_seq, drawn under the rating row's lock (so a player's versions grow in
   * commit order). Returns that version.
   */
  async writeBestAndRating(
    uid: string,
    levelId: number,
    best: Omit<BestRow, 'version'>,
    atp: string,
    manager: EntityManager,
  ): Promise<number> {
    const rows = await this.statements.runIn<{ version: string }>(
      manager,
      'upload_write_best',
      `WITH v AS (SELECT nextval('rank_version_seq') AS version),
       best AS (
         INSERT INTO player_chart_best (uid, level_id, acc, first_time_ms, record_id, rating, version, updated_at)
         SELECT $1, $2, $3, $4, $5, $6, v.version, now() FROM v
         ON CONFLICT (uid, level_id) DO UPDATE
           SET acc = EXCLUDED.acc, first_time_ms = EXCLUDED.first_time_ms, record_id = EXCLUDED.record_id,
               rating = EXCLUDED.rating, version = EXCLUDED.version, updated_at = now()
       )
       UPDATE player_rating SET atp = $7, version = (SELECT version FROM v), updated_at = now() WHERE uid = $1 RETURNING version`,
      [uid, levelId, best.acc, best.firstTimeMs, best.recordId, best.rating, atp],
    );
    return Number(rows[0].version);
  }

  /** `count` fresh rating versions (recompute batches draw them after locking their players' rows). */
  async nextVersions(count: number, manager: EntityManager): Promise<number[]> {
    if (count === 0) return [];
    const rows = await manager.query<Array<{ version: string }>>(
      "SELECT nextval('rank_version_seq') AS version FROM generate_series(1, $1)",
      [count],
    );
    return rows.map((row) => Number(row.version));
  }

  /** The next players (by uid) that have stored records, for the recompute batches. */
  async nextPlayersWithRecords(afterUid: string, limit: number): Promise<string[]> {
    const rows = await this.dataSource.manager.query<Array<{ uid: string }>>(
      'SELECT DISTINCT uid FROM play_record WHERE uid > $1 ORDER BY uid LIMIT $2',
      [afterUid, limit],
    );
    return rows.map((row) => row.uid);
  }

  /** Locks the rating rows of the players (uid order, so batches and uploads never deadlock), creating missing ones. */
  async lockRatings(uids: string[], manager: EntityManager): Promise<Map<string, { atp: string; version: number }>> {
    await manager.query(
      `INSERT INTO player_rating (uid, atp, version) SELECT u, 0, 0 FROM unnest($1::bigint[]) AS u ORDER BY u ON CONFLICT (uid) DO NOTHING`,
      [uids],
    );
    const rows = await manager.query<Array<{ uid: string; atp: string; version: string }>>(
      'SELECT uid, atp, version FROM player_rating WHERE uid = ANY($1::bigint[]) ORDER BY uid FOR UPDATE',
      [uids],
    );
    return new Map(rows.map((row) => [row.uid, { atp: row.atp, version: Number(row.version) }]));
  }

  /**
   * The best counted play of each of the players on each chart, from the stored records: highest
   * acc, then received first, then lowest record id; with the chart's current constant.
   */
  async computeBests(uids: string[], manager: EntityManager): Promise<ComputedBest[]> {
    const rows = await manager.query<
      Array<{ uid: string; level_id: number; acc: number; first_ms: string; id: string; constant: number }>
    >(
      `SELECT DISTINCT ON (r.uid, r.level_id) r.uid, r.level_id, r.acc, ${EPOCH_MS('r.received_at')} AS first_ms, r.id, c.difficulty_constant AS constant
         FROM play_record r
         JOIN chart c ON c.level_id = r.level_id
        WHERE r.uid = ANY($1::bigint[]) AND ${COUNTED_RECORD('r', 'c')}
        ORDER BY r.uid, r.level_id, r.acc DESC, r.received_at ASC, r.id ASC`,
      [uids],
    );
    return rows.map((row) => ({
      uid: row.uid,
      levelId: row.level_id,
      acc: row.acc,
      firstTimeMs: Number(row.first_ms),
      recordId: row.id,
      constant: row.constant,
    }));
  }

  async readBests(uids: string[], manager: EntityManager): Promise<StoredBest[]> {
    const rows = await manager.query<Array<BestSqlRow & { uid: string; level_id: number }>>(
      'SELECT uid, level_id, acc, first_time_ms, record_id, rating, version FROM player_chart_best WHERE uid = ANY($1::bigint[])',
      [uids],
    );
    return rows.map((row) => ({ uid: row.uid, levelId: row.level_id, ...toBest(row) }));
  }

  /** Replaces the bests of the listed (uid, level) keys and deletes `removed`, in bulk. */
  async replaceBests(
    upserts: StoredBest[],
    removed: Array<{ uid: string; levelId: number }>,
    manager: EntityManager,
  ): Promise<void> {
    if (upserts.length > 0) {
      await manager.query(
        `INSERT INTO player_chart_best (uid, level_id, acc, first_time_ms, record_id, rating, version, updated_at)
         SELECT t.uid, t.level_id, t.acc, t.first_time_ms, t.record_id, t.rating, t.version, now()
           FROM jsonb_to_recordset($1::jsonb)
             AS t(uid bigint, level_id int, acc float8, first_time_ms bigint, record_id bigint, rating float8, version bigint)
         ON CONFLICT (uid, level_id) DO UPDATE
           SET acc = EXCLUDED.acc, first_time_ms = EXCLUDED.first_time_ms, record_id = EXCLUDED.record_id,
               rating = EXCLUDED.rating, version = EXCLUDED.version, updated_at = now()`,
        [
          JSON.stringify(
            upserts.map((b) => ({
              uid: b.uid,
              level_id: b.levelId,
              acc: b.acc,
              first_time_ms: b.firstTimeMs,
              record_id: b.recordId,
              rating: b.rating,
              version: b.version,
            })),
          ),
        ],
      );
    }
    if (removed.length > 0) {
      await manager.query(
        `DELETE FROM player_chart_best b USING jsonb_to_recordset($1::jsonb) AS t(uid bigint, level_id int)
          WHERE b.uid = t.uid AND b.level_id = t.level_id`,
        [JSON.stringify(removed.map((key) => ({ uid: key.uid, level_id: key.levelId })))],
      );
    }
  }

  /** Sets ATP and version of the listed players and deletes the rating rows of `unranked` (no counted play left). */
  async replaceRatings(
    updates: Array<{ uid: string; atp: string; version: number }>,
    unranked: string[],
    manager: EntityManager,
  ): Promise<void> {
    if (updates.length > 0) {
      await manager.query(
        `UPDATE player_rating r SET atp = t.atp, version = t.version, updated_at = now()
           FROM jsonb_to_recordset($1::jsonb) AS t(uid bigint, atp numeric, version bigint)
          WHERE r.uid = t.uid`,
        [JSON.stringify(updates)],
      );
    }
    if (unranked.length > 0) {
      await manager.query('DELETE FROM player_rating WHERE uid = ANY($1::bigint[])', [unranked]);
    }
  }
}
