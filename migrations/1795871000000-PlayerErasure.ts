import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Erasing a player (docs/decisions.md "Erasing a player"): the tombstone table player_erasure
 * (generated from PlayerErasureEntity), and, written by hand, the audit log's append-only trigger
 * function made to let one kind of UPDATE through: inside a transaction that set
 * `rhythmc.audit_pseudonymise` to `on` (SET LOCAL, the erasure's own transaction), a row may change
 * its target and summary, and nothing else. DELETE and TRUNCATE stay refused. Runs on PostgreSQL
 * and PGlite.
 */
export class PlayerErasure1795871000000 implements MigrationInterface {
  name = 'PlayerErasure1795871000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "player_erasure" (
                "uid" bigint NOT NULL,
                "pseudonym" character varying(32) NOT NULL,
                "erased_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_player_erasure" PRIMARY KEY ("uid")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "IDX_player_erasure_pseudonym" ON "player_erasure" ("pseudonym")
        `);
    await queryRunner.query(`
            CREATE OR REPLACE FUNCTION "admin_audit_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                -- Nested: a statement-level (TRUNCATE) call has no NEW row to compare.
                IF TG_OP = 'UPDATE' AND current_setting('rhythmc.audit_pseudonymise', true) = 'on' THEN
                    IF NEW.id = OLD.id AND NEW.at = OLD.at AND NEW.action = OLD.action
                       AND NEW.credential = OLD.credential
                       AND NEW.request_id IS NOT DISTINCT FROM OLD.request_id
                       AND NEW.source_address IS NOT DISTINCT FROM OLD.source_address
                       AND NEW.actor IS NOT DISTINCT FROM OLD.actor
                       AND NEW.actor_id IS NOT DISTINCT FROM OLD.actor_id THEN
                        RETURN NEW;
                    END IF;
                END IF;
                RAISE EXCEPTION 'admin_audit is append-only';
            END
            $$
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE OR REPLACE FUNCTION "admin_audit_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'admin_audit is append-only';
            END
            $$
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_player_erasure_pseudonym"
        `);
    await queryRunner.query(`
            DROP TABLE "player_erasure"
        `);
  }
}
