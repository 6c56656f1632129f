import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The change watermark of the in-process rank index's snapshot (docs/decisions.md "Rank index at
 * start-up"). Written by hand: triggers, so that no write path has to remember it.
 * - `player_rating.change_seq`: the next value of rank_change_seq, set by a BEFORE INSERT OR UPDATE
 *   trigger on every write of the row. Every change of a player's bests also writes this row (the
 *   upload's statement, the recompute), so "players with change_seq > W" are all whose rank keys
 *   changed after a snapshot taken at W.
 * - `rank_change_tombstone`: one row per deleted rating row (no counted play left, a cascaded
 *   player delete), from an AFTER DELETE trigger, with its own change_seq. Rows at or below the
 *   watermark of the newest snapshot are pruned when it is written.
 * Existing rows get change_seq 0: no snapshot predates this migration (a snapshot names the last
 * migration and is not used after another one ran).
 */
export class RankChangeLog1795700000000 implements MigrationInterface {
  name = 'RankChangeLog1795700000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE SEQUENCE "rank_change_seq"
        `);
    await queryRunner.query(`
            ALTER TABLE "player_rating" ADD "change_seq" bigint NOT NULL DEFAULT 0
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_player_rating_change_seq" ON "player_rating" ("change_seq")
        `);
    await queryRunner.query(`
            CREATE TABLE "rank_change_tombstone" (
                "change_seq" bigint NOT NULL,
                "uid" bigint NOT NULL,
                CONSTRAINT "PK_rank_change_tombstone" PRIMARY KEY ("change_seq")
            )
        `);
    await queryRunner.query(`
            CREATE FUNCTION "rank_change_mark"() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                NEW."change_seq" := nextval('rank_change_seq');
                RETURN NEW;
            END
            $$
        `);
    await queryRunner.query(`
            CREATE TRIGGER "TRG_player_rating_change_mark"
            BEFORE INSERT OR UPDATE ON "player_rating"
            FOR EACH ROW EXECUTE FUNCTION "rank_change_mark"()
        `);
    await queryRunner.query(`
            CREATE FUNCTION "rank_change_tombstone_add"() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO "rank_change_tombstone" ("change_seq", "uid") VALUES (nextval('rank_change_seq'), OLD."uid");
                RETURN OLD;
            END
            $$
        `);
    await queryRunner.query(`
            CREATE TRIGGER "TRG_player_rating_change_tombstone"
            AFTER DELETE ON "player_rating"
            FOR EACH ROW EXECUTE FUNCTION "rank_change_tombstone_add"()
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP TRIGGER "TRG_player_rating_change_tombstone" ON "player_rating"
        `);
    await queryRunner.query(`
            DROP FUNCTION "rank_change_tombstone_add"()
        `);
    await queryRunner.query(`
            DROP TRIGGER "TRG_player_rating_change_mark" ON "player_rating"
        `);
    await queryRunner.query(`
            DROP FUNCTION "rank_change_mark"()
        `);
    await queryRunner.query(`
            DROP TABLE "rank_change_tombstone"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_player_rating_change_seq"
        `);
    await queryRunner.query(`
            ALTER TABLE "player_rating" DROP COLUMN "change_seq"
        `);
    await queryRunner.query(`
            DROP SEQUENCE "rank_change_seq"
        `);
  }
}
