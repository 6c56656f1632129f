import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rating history (docs/decisions.md "Rating history"): one row per day and block of 256 uids
 * (`bucket` = uid >> 8) holding, for each player of the block who played that day, the slot
 * (uid & 255), ATP in ten-thousandths, site rank (0: none, banned) and plays, as four parallel
 * arrays; `rating_history_run` marks the days taken. Rows stay uncompressed in the heap up to a
 * page (toast_tuple_target): a history read is one index range of at most 90 rows. A BRIN index
 * on play_record.received_at lets the daily snapshot read one day's plays without a scan of all
 * of them (the upload path pays almost nothing for it). Runs on PostgreSQL and PGlite.
 */
export class RatingHistory1795882000000 implements MigrationInterface {
  name = 'RatingHistory1795882000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "rating_history_day" (
                "bucket" bigint NOT NULL,
                "day" smallint NOT NULL,
                "slots" smallint array NOT NULL,
                "atp_e4" integer array NOT NULL,
                "site_rank" integer array NOT NULL,
                "plays" integer array NOT NULL,
                CONSTRAINT "PK_rating_history_day" PRIMARY KEY ("bucket", "day")
            )
        `);
    await queryRunner.query(`ALTER TABLE "rating_history_day" SET (toast_tuple_target = 8160)`);
    await queryRunner.query(`
            CREATE TABLE "rating_history_run" (
                "day" smallint NOT NULL,
                "players" integer NOT NULL,
                "taken_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_rating_history_run" PRIMARY KEY ("day")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_play_record_received_brin" ON "play_record" USING brin ("received_at")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_play_record_received_brin"`);
    await queryRunner.query(`DROP TABLE "rating_history_run"`);
    await queryRunner.query(`DROP TABLE "rating_history_day"`);
  }
}
