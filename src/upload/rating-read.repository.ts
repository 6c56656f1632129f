import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export interface BestRow {
  level_id: number;
  acc: number;
  rating: number;
  first_time_ms: string;
  record_id: string;
  version: string;
}

/** Read-only: a player's ATP and bests for the admin profile (the upload path never calls it). */
@Injectable()
export class RatingReadRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The rating row: ATP and its version; null without a counted play. */
  async rating(uid: string): Promise<{ atp: string; version: string } | null> {
    const rows = await this.dataSource.query<{ atp: string; version: string }[]>(
      'SELECT atp, version FROM player_rating WHERE uid = $1',
      [uid],
    );
    return rows.length > 0 ? rows[0] : null;
  }

  /** The player's bests by rating descending (then level id), at most `limit`, and how many there are. */
  async bests(uid: string, limit: number): Promise<{ rows: BestRow[]; total: number }> {
    const rows = await this.dataSource.query<BestRow[]>(
      'SELECT level_id, acc, rating, first_time_ms, record_id, version FROM player_chart_best WHERE uid = $1 ORDER BY rating DESC, level_id ASC LIMIT $2',
      [uid, limit],
    );
    const [{ total }] = await this.dataSource.query<{ total: number }[]>(
      'SELECT count(*)::int AS total FROM player_chart_best WHERE uid = $1',
      [uid],
    );
    return { rows, total };
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
