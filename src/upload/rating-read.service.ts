import { Injectable } from '@nestjs/common';
import { RatingReadRepository } from './rating-read.repository';

export interface PlayerRatingSummary {
  /** null while the player has no counted play. */
  atp: number | null;
  bests: { levelId: number; acc: number; rating: number }[];
  bestCount: number;
}

/** Read-only view of a player's ATP and bests (GET /admin/players/{uid}). */
@Injectable()
export class RatingReadService {
  constructor(private readonly ratings: RatingReadRepository) {}

  async playerRatings(uid: string, bestLimit: number): Promise<PlayerRatingSummary> {
    const [atp, bests] = [await this.ratings.atp(uid), await this.ratings.bests(uid, bestLimit)];
    return {
      atp: atp === null ? null : Number(atp),
      bests: bests.rows.map((row) => ({ levelId: row.level_id, acc: row.acc, rating: row.rating })),
      bestCount: bests.total,
    };
  }

  /** Uploads received in the last minute and the last 15 minutes (GET /admin/overview). */
  recentUploads(): Promise<{ lastMinute: number; last15Minutes: number }> {
    return this.ratings.recentUploads();
  }
}
