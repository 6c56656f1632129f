import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export interface BestRow {
  level_id: number;
  acc: number;
  rating: number;
}

/** Read-only: a player's ATP and bests for the admin profile (the upload path never calls it). */
@Injectable()
export class RatingReadRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async atp(uid: string): Promise<string | null> {
    const rows = await this.dataSource.query<{ atp: string }[]>('SELECT atp FROM player_rating WHERE uid = $1', [uid]);
    return rows.length > 0 ? rows[0].atp : null;
  }

  /** The player's bests by rating descending (then level id), at most `limit`, and how many there are. */
  async bests(uid: string, limit: number): Promise<{ rows: BestRow[]; total: number }> {
    const rows = await this.dataSource.query<BestRow[]>(
      'SELECT level_id, acc, rating FROM player_chart_best WHERE uid = $1 ORDER BY rating DESC, level_id ASC LIMIT $2',
      [uid, limit],
    );
    const [{ total }] = await this.dataSource.query<{ total: number }[]>('SELECT count(*)::int AS total FROM player_chart_best WHERE uid = $1', [uid]);
    return { rows, total };
  }
}
