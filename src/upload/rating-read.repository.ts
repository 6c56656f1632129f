import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PreparedQueries } from '../database/prepared-queries';
import { COUNTED_RECORD } from './counted-record.rule';
import { BAN_CHECK, BanCheckRow, toBanCheck } from '../ranking/rank-sql';
import type { BanCheck } from '../ranking';

export interface BestRow {
  level_id: number;
  /** The chart's name; null when the catalog has no row for it. */
  chart_name: string | null;
  acc: number;
  rating: number;
  first_time_ms: string;
  record_id: string;
  version: string;
}

/** A counted play of the player, newest first, with its chart. */
export interface RecentPlayRow {
  id: string;
  level_id: number;
  chart_name: string;
  difficulty_constant: number;
  acc: number;
  full_combo: boolean;
  all_perfect: boolean;
  max_combo: number;
  received_at: Date;
}

/** The rating row of $1 (ATP and version; nulls without one) and the ban check the rank answer needs, in one snapshot. */
const RATING_SQL = `SELECT r.atp, r.version, ${BAN_CHECK}
  FROM (SELECT $1::bigint AS uid) AS me LEFT JOIN player_rating r ON r.uid = me.uid`;

/**
 * The player's bests by rating descending (then level id), at most $2, each with its chart's name
 * and how many there are in all.
 */
const BESTS_SQL = `SELECT b.level_id, c.name AS chart_name, b.acc, b.rating, b.first_time_ms, b.record_id, b.version,
       count(*) OVER () AS total
  FROM player_chart_best b LEFT JOIN chart c ON c.level_id = b.level_id
 WHERE b.uid = $1 ORDER BY b.rating DESC, b.level_id ASC LIMIT $2`;

/**
 * The player's newest $2 plays that count (counted-record.rule.ts), by id descending (the order the
 * service stored them): IDX_play_record_uid_recent walked backwards from the player's last record.
 */
const RECENT_PLAYS_SQL = `SELECT r.id, r.level_id, c.name AS chart_name, c.difficulty_constant, r.acc, r.full_combo, r.all_perfect,
       r.max_combo, r.received_at
  FROM play_record r JOIN chart c ON c.level_id = r.level_id
 WHERE r.uid = $1 AND ${COUNTED_RECORD('r', 'c')}
 ORDER BY r.id DESC
 LIMIT $2`;

/**
 * Read-only: a player's ATP, bests and plays for the admin profile and the public API (the upload
 * path never calls it). Named prepared statements on PostgreSQL (PreparedQueries): these are the
 * profile's hot reads.
 */
@Injectable()
export class RatingReadRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly prepared: PreparedQueries,
  ) {}

  /** The rating row (null without a counted play) and the player's ban check, read together. */
  async rating(uid: string): Promise<{ rating: { atp: string; version: string } | null; bans: BanCheck }> {
    // The rating row's columns: both, or neither (no counted play yet).
    const [row] = await this.prepared.run<({ atp: null } | { atp: string; version: string }) & BanCheckRow>(
      'rating_read_rating',
      RATING_SQL,
      [uid],
    );
    return {
      rating: row.atp === null ? null : { atp: row.atp, version: row.version },
      bans: toBanCheck(row),
    };
  }

  /** The player's bests by rating descending (then level id), at most `limit` (≥ 1), and how many there are. */
  async bests(uid: string, limit: number): Promise<{ rows: BestRow[]; total: number }> {
    const rows = await this.prepared.run<BestRow & { total: string }>('rating_read_bests', BESTS_SQL, [uid, limit]);
    return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
  }

  /** The player's newest `limit` counted plays. */
  recentPlays(uid: string, limit: number): Promise<RecentPlayRow[]> {
    return this.prepared.run<RecentPlayRow>('rating_read_recent_plays', RECENT_PLAYS_SQL, [uid, limit]);
  }

  /**
   * Records received in the last 1 and 15 minutes. play_record has no index on received_at (the
   * upload path stays one index lighter): the newest rows are read backwards along the primary
   * key (ids follow the insert order), at most RECENT_UPLOAD_SCAN of them.
   */
  async recentUploads(): Promise<{ lastMinute: number; last15Minutes: number }> {
    const rows: Array<{ last_minute: number; last_15_minutes: number }> = await this.dataSource.query(
      `SELECT (count(*) FILTER (WHERE received_at > now() - interval '1 minute'))::int AS last_minute,
              count(*)::int AS last_15_minutes
         FROM (SELECT received_at FROM play_record ORDER BY id DESC LIMIT ${RECENT_UPLOAD_SCAN}) newest
        WHERE received_at > now() - interval '15 minutes'`,
    );
    return { lastMinute: rows[0].last_minute, last15Minutes: rows[0].last_15_minutes };
  }
}

/** The most records the overview's upload counts read (a higher count shows as this number). */
export const RECENT_UPLOAD_SCAN = 100_000;
