import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A closed period's boards archived in blocks (issue #44: a close of 1M players in ≤ 10 s;
 * docs/decisions.md "Periods and seasons", archive layout): per board, one row per 1,000 ranks
 * (parallel arrays of ranks, uids and values, in rank order) and one row per 1,000 uids (sorted
 * uids and their ranks, keyed by the first), instead of one row per rank with two btree entries.
 * The arrays are stored uncompressed (STORAGE EXTERNAL): the close does not spend its time in pglz.
 *
 * An expand step: the row tables stay (the previous release still reads and writes them during a
 * rolling upgrade; dropped a release later). The archives they hold are copied into blocks here,
 * and their periods marked `archived_in_blocks`; a period the previous release archives after this
 * migration is read live by this release until its period job archives it again in blocks.
 * Generated from the entities, then the storage, the copy and the marks added by hand.
 */
export class PeriodArchiveBlocks1795890000000 implements MigrationInterface {
  name = 'PeriodArchiveBlocks1795890000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "period_atp_rank_block" (
                "period_id" bigint NOT NULL,
                "block" integer NOT NULL,
                "ranks" integer array NOT NULL,
                "uids" bigint array NOT NULL,
                "atps" numeric(10, 4) array NOT NULL,
                CONSTRAINT "PK_05b2652fd012aead5e1708a007a" PRIMARY KEY ("period_id", "block")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "period_atp_uid_block" (
                "period_id" bigint NOT NULL,
                "first_uid" bigint NOT NULL,
                "uids" bigint array NOT NULL,
                "ranks" integer array NOT NULL,
                CONSTRAINT "PK_ada81f83f675055788e150483d9" PRIMARY KEY ("period_id", "first_uid")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "period_chart_rank_block" (
                "period_id" bigint NOT NULL,
                "level_id" integer NOT NULL,
                "block" integer NOT NULL,
                "ranks" integer array NOT NULL,
                "uids" bigint array NOT NULL,
                "accs" double precision array NOT NULL,
                "ratings" double precision array NOT NULL,
                CONSTRAINT "PK_46da5446d4c8ca482fb563d64b0" PRIMARY KEY ("period_id", "level_id", "block")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "period_chart_uid_block" (
                "period_id" bigint NOT NULL,
                "level_id" integer NOT NULL,
                "first_uid" bigint NOT NULL,
                "uids" bigint array NOT NULL,
                "ranks" integer array NOT NULL,
                CONSTRAINT "PK_15b017d58b2f4f692991e06647f" PRIMARY KEY ("period_id", "level_id", "first_uid")
            )
        `);
    await queryRunner.query(`
            ALTER TABLE "board_period"
            ADD "archived_in_blocks" boolean NOT NULL DEFAULT false
        `);
    for (const [table, columns] of [
      ['period_atp_rank_block', ['ranks', 'uids', 'atps']],
      ['period_atp_uid_block', ['uids', 'ranks']],
      ['period_chart_rank_block', ['ranks', 'uids', 'accs', 'ratings']],
      ['period_chart_uid_block', ['uids', 'ranks']],
    ] as const) {
      const storage = columns.map((column) => `ALTER COLUMN "${column}" SET STORAGE EXTERNAL`).join(', ');
      await queryRunner.query(`ALTER TABLE "${table}" ${storage}`);
    }
    // The archives of the row layout, copied as they are (their ranks, gaps left by erasures included).
    await queryRunner.query(`
            INSERT INTO period_atp_rank_block (period_id, block, ranks, uids, atps)
            SELECT a.period_id, (a.rank - 1) / 1000, array_agg(a.rank ORDER BY a.rank), array_agg(a.uid ORDER BY a.rank),
                   array_agg(a.atp ORDER BY a.rank)
              FROM period_atp_archive a GROUP BY a.period_id, (a.rank - 1) / 1000
        `);
    await queryRunner.query(`
            INSERT INTO period_atp_uid_block (period_id, first_uid, uids, ranks)
            SELECT s.period_id, min(s.uid), array_agg(s.uid ORDER BY s.uid), array_agg(s.rank ORDER BY s.uid)
              FROM (SELECT a.period_id, a.uid, a.rank, (row_number() OVER (PARTITION BY a.period_id ORDER BY a.uid) - 1) / 1000 AS g
                      FROM period_atp_archive a) s
             GROUP BY s.period_id, s.g
        `);
    await queryRunner.query(`
            INSERT INTO period_chart_rank_block (period_id, level_id, block, ranks, uids, accs, ratings)
            SELECT a.period_id, a.level_id, (a.rank - 1) / 1000, array_agg(a.rank ORDER BY a.rank),
                   array_agg(a.uid ORDER BY a.rank), array_agg(a.acc ORDER BY a.rank), array_agg(a.rating ORDER BY a.rank)
              FROM period_chart_archive a GROUP BY a.period_id, a.level_id, (a.rank - 1) / 1000
        `);
    await queryRunner.query(`
            INSERT INTO period_chart_uid_block (period_id, level_id, first_uid, uids, ranks)
            SELECT s.period_id, s.level_id, min(s.uid), array_agg(s.uid ORDER BY s.uid), array_agg(s.rank ORDER BY s.uid)
              FROM (SELECT a.period_id, a.level_id, a.uid, a.rank,
                           (row_number() OVER (PARTITION BY a.period_id, a.level_id ORDER BY a.uid) - 1) / 1000 AS g
                      FROM period_chart_archive a) s
             GROUP BY s.period_id, s.level_id, s.g
        `);
    await queryRunner.query(`UPDATE board_period SET archived_in_blocks = true WHERE archived_at IS NOT NULL`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "board_period" DROP COLUMN "archived_in_blocks"
        `);
    await queryRunner.query(`
            DROP TABLE "period_chart_uid_block"
        `);
    await queryRunner.query(`
            DROP TABLE "period_chart_rank_block"
        `);
    await queryRunner.query(`
            DROP TABLE "period_atp_uid_block"
        `);
    await queryRunner.query(`
            DROP TABLE "period_atp_rank_block"
        `);
  }
}
