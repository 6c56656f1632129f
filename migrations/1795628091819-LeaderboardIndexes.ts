import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The leaderboard reads walk the site and track orders (decisions.md §5) from either end and
 * from any player: the indexes now have those orders' mixed directions, so top N and the window
 * around a player are index range scans in both directions. They replace the ascending-only
 * indexes, whose one other reader (the SQL fallback of rank counts, UploadRepository.unbannedAhead)
 * uses them for range conditions, which an index in either direction serves. Written by hand:
 * TypeORM cannot express a per-column sort order (the entities declare them `synchronize: false`).
 */
export class LeaderboardIndexes1795628091819 implements MigrationInterface {
  name = 'LeaderboardIndexes1795628091819';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."IDX_player_rating_site"
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_player_rating_site" ON "player_rating" ("atp" DESC, "uid" ASC)
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_player_chart_best_track"
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_player_chart_best_track" ON "player_chart_best" ("level_id" ASC, "acc" DESC, "first_time_ms" ASC, "uid" ASC)
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."IDX_player_chart_best_track"
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_player_chart_best_track" ON "player_chart_best" ("level_id", "acc", "first_time_ms", "uid")
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_player_rating_site"
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_player_rating_site" ON "player_rating" ("atp", "uid")
        `);
  }
}
