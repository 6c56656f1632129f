import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PreparedQueries } from '../database/prepared-queries';
import { COUNTED_RECORD } from './counted-record.rule';
import { BAN_CHECK, BanCheckRow, EPOCH_MS, toBanCheck } from '../ranking/rank-sql';
import type { BanCheck } from '../ranking';

/** A best of the player, as the profile statement's JSON carries it (bigints as text). */
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

/** A counted play of the player, newest first, with its chart (the profile statement's JSON). */
export interface RecentPlayRow {
  level_id: number;
  chart_name: string;
  difficulty_constant: number;
  acc: number;
  full_combo: boolean;
  all_perfect: boolean;
  max_combo: number;
  /** Epoch milliseconds (floored), as text. */
  received_ms: string;
}

/** What one profile read returns: the rating (null without a counted play), the ban check, the bests and the recent plays. */
export interface ProfileRead {
  rating: { atp: string; version: string } | null;
  bans: BanCheck;
  bests: BestRow[];
  bestCount: number;
  recent: RecentPlayRow[];
}

/** How many of a player's newest records the profile looks through for its recent plays. */
export const RECENT_PLAY_SCAN = 1_000;

/**
 * A player's profile in one statement and one snapshot (one round trip where there were three):
 * - the rating row of $1 (ATP and version; nulls without one) and the ban check the rank answer needs;
 * - how many bests the player has, and the bests by rating descending (then level id), at most $2,
 *   each with its chart's name (null when the catalog has no row for it);
 * - the newest $3 plays that count (counted-record.rule.ts), by id descending (the order the service
 *   stored them), among the player's last RECENT_PLAY_SCAN records: IDX_play_record_uid_recent
 *   walked backwards from the player's last record, no further than that (a game server can store
 *   any number of failed plays for a player, and failed plays are kept forever by default; each
 *   profile read walked them all).
 * The lists come as JSON arrays (bigints as text, so no precision is lost); LIMIT 0 reads nothing.
 */
const PROFILE_SQL = `SELECT r.atp, r.version, ${BAN_CHECK},
  (SELECT count(*) FROM player_chart_best WHERE uid = $1) AS best_count,
  (SELECT coalesce(json_agg(b ORDER BY b.rating DESC, b.level_id ASC), '[]'::json)
     FROM (SELECT pb.level_id, c.name AS chart_name, pb.acc, pb.rating, pb.first_time_ms::text AS first_time_ms,
                  pb.record_id::text AS record_id, pb.version::text AS version
             FROM player_chart_best pb LEFT JOIN chart c ON c.level_id = pb.level_id
            WHERE pb.uid = $1 ORDER BY pb.rating DESC, pb.level_id ASC LIMIT $2) AS b) AS bests,
  (SELECT coalesce(json_agg(p ORDER BY p.id DESC), '[]'::json)
     FROM (SELECT pr.id, pr.level_id, c.name AS chart_name, c.difficulty_constant, pr.acc, pr.full_combo,
                  pr.all_perfect, pr.max_combo, ${EPOCH_MS('pr.received_at')}::text AS received_ms
             FROM (SELECT x.id, x.level_id, x.acc, x.full_combo, x.all_perfect, x.max_combo, x.received_at,
                          x.pass, x.voided_at, x.flags, x.approved_at
                     FROM play_record x WHERE x.uid = $1 ORDER BY x.id DESC LIMIT ${RECENT_PLAY_SCAN}) AS pr
             JOIN chart c ON c.level_id = pr.level_id
            WHERE ${COUNTED_RECORD('pr', 'c')}
            ORDER BY pr.id DESC
            LIMIT $3) AS p) AS recent
  FROM (SELECT $1::bigint AS uid) AS me LEFT JOIN player_rating r ON r.uid = me.uid`;

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

  /** The player's profile read (PROFILE_SQL): at most `bestLimit` (≥ 1) bests and `recentLimit` (≥ 0) recent plays. */
  async profile(uid: string, bestLimit: number, recentLimit: number): Promise<ProfileRead> {
    // The rating row's columns: both, or neither (no counted play yet).
    const [row] = await this.prepared.run<
      ({ atp: null } | { atp: string; version: string }) &
        BanCheckRow & { best_count: string; bests: BestRow[]; recent: RecentPlayRow[] }
    >('rating_read_profile', PROFILE_SQL, [uid, bestLimit, recentLimit]);
    return {
      rating: row.atp === null ? null : { atp: row.atp, version: row.version },
      bans: toBanCheck(row),
      bests: row.bests,
      bestCount: Number(row.best_count),
      recent: row.recent,
    };
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
