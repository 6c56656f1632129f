import { MigrationInterface, QueryRunner } from 'typeorm';

export class Players1795229119150 implements MigrationInterface {
  name = 'Players1795229119150';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "player_credential" (
                "uid" bigint NOT NULL,
                "token_hash" character(64) NOT NULL,
                "issued_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "UQ_3357268ce73df27c05824e6325b" UNIQUE ("token_hash"),
                CONSTRAINT "PK_797810d8b8066aef44c826780f3" PRIMARY KEY ("uid")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "player_resume_token" (
                "uid" bigint NOT NULL,
                "token_hash" character(64) NOT NULL,
                "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "issued_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "UQ_d0c8916d81bf77235640f6ed42c" UNIQUE ("token_hash"),
                CONSTRAINT "PK_d131f970daaaf1c629fd67a56a7" PRIMARY KEY ("uid")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "player_session" (
                "id" uuid NOT NULL DEFAULT gen_random_uuid(),
                "uid" bigint NOT NULL,
                "server_session_id" uuid NOT NULL,
                "token_hash" character(64) NOT NULL,
                "token_expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "mode" character varying(16) NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "logged_out_at" TIMESTAMP WITH TIME ZONE,
                "logout_reason" character varying(24),
                CONSTRAINT "UQ_df316c21d83077e9d16fcd6ac90" UNIQUE ("token_hash"),
                CONSTRAINT "PK_983078078a04ace9b95b2a2b228" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_player_session_open_by_server_session" ON "player_session" ("server_session_id")
            WHERE logged_out_at IS NULL
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "UQ_player_session_open_per_player" ON "player_session" ("uid")
            WHERE logged_out_at IS NULL
        `);
    await queryRunner.query(`
            CREATE TABLE "collection" (
                "key" character varying(128) NOT NULL,
                "type" character varying(32) NOT NULL,
                "unlock_method" jsonb NOT NULL,
                "properties" jsonb NOT NULL DEFAULT '{}'::jsonb,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_f58e2223c52fc3281cfe9225ce8" PRIMARY KEY ("key")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_collection_type" ON "collection" ("type")
        `);
    await queryRunner.query(`
            CREATE TABLE "player_collection" (
                "uid" bigint NOT NULL,
                "collection_key" character varying(128) NOT NULL,
                "granted_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_18322da9a98bc011bc4197149d1" PRIMARY KEY ("uid", "collection_key")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "player" (
                "uid" BIGSERIAL NOT NULL,
                "uuid" uuid,
                "username" character varying(32) NOT NULL,
                "display_name" character varying(64) NOT NULL DEFAULT '',
                "data_version" integer NOT NULL DEFAULT '0',
                "banstate" integer NOT NULL DEFAULT '0',
                "continue_enabled" boolean NOT NULL DEFAULT false,
                "sound" jsonb,
                "song_selection_state" jsonb,
                "extra_options" jsonb NOT NULL DEFAULT '{}'::jsonb,
                "prefix_key" character varying(128),
                "suffix_key" character varying(128),
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "UQ_d361920f8c6a8ea7950a34e0200" UNIQUE ("uuid"),
                CONSTRAINT "PK_700516a810ac9c37a1e967aa10e" PRIMARY KEY ("uid")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "player_ban" (
                "id" BIGSERIAL NOT NULL,
                "uid" bigint NOT NULL,
                "reason" character varying(512) NOT NULL DEFAULT '',
                "message" character varying(512) NOT NULL DEFAULT '',
                "until" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "lifted_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "PK_b9b822f163679cc98f9ab140169" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "UQ_player_ban_unlifted" ON "player_ban" ("uid")
            WHERE lifted_at IS NULL
        `);
    await queryRunner.query(`
            ALTER TABLE "player_credential"
            ADD CONSTRAINT "FK_797810d8b8066aef44c826780f3" FOREIGN KEY ("uid") REFERENCES "player"("uid") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "player_resume_token"
            ADD CONSTRAINT "FK_d131f970daaaf1c629fd67a56a7" FOREIGN KEY ("uid") REFERENCES "player"("uid") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "player_session"
            ADD CONSTRAINT "FK_91e40e5cb2667a8a51a545117d5" FOREIGN KEY ("uid") REFERENCES "player"("uid") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "player_session"
            ADD CONSTRAINT "FK_7e90cf62a2f2e1c0d0c352004a4" FOREIGN KEY ("server_session_id") REFERENCES "server_session"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "player_collection"
            ADD CONSTRAINT "FK_f6a0bc6d00a85a985d0e3267871" FOREIGN KEY ("uid") REFERENCES "player"("uid") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "player_collection"
            ADD CONSTRAINT "FK_47d49acc1eb7e6a327c72bf0e5d" FOREIGN KEY ("collection_key") REFERENCES "collection"("key") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "player_ban"
            ADD CONSTRAINT "FK_20b34133a9f47208418054c6b00" FOREIGN KEY ("uid") REFERENCES "player"("uid") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "player_ban" DROP CONSTRAINT "FK_20b34133a9f47208418054c6b00"
        `);
    await queryRunner.query(`
            ALTER TABLE "player_collection" DROP CONSTRAINT "FK_47d49acc1eb7e6a327c72bf0e5d"
        `);
    await queryRunner.query(`
            ALTER TABLE "player_collection" DROP CONSTRAINT "FK_f6a0bc6d00a85a985d0e3267871"
        `);
    await queryRunner.query(`
            ALTER TABLE "player_session" DROP CONSTRAINT "FK_7e90cf62a2f2e1c0d0c352004a4"
        `);
    await queryRunner.query(`
            ALTER TABLE "player_session" DROP CONSTRAINT "FK_91e40e5cb2667a8a51a545117d5"
        `);
    await queryRunner.query(`
            ALTER TABLE "player_resume_token" DROP CONSTRAINT "FK_d131f970daaaf1c629fd67a56a7"
        `);
    await queryRunner.query(`
            ALTER TABLE "player_credential" DROP CONSTRAINT "FK_797810d8b8066aef44c826780f3"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."UQ_player_ban_unlifted"
        `);
    await queryRunner.query(`
            DROP TABLE "player_ban"
        `);
    await queryRunner.query(`
            DROP TABLE "player"
        `);
    await queryRunner.query(`
            DROP TABLE "player_collection"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_collection_type"
        `);
    await queryRunner.query(`
            DROP TABLE "collection"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."UQ_player_session_open_per_player"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."IDX_player_session_open_by_server_session"
        `);
    await queryRunner.query(`
            DROP TABLE "player_session"
        `);
    await queryRunner.query(`
            DROP TABLE "player_resume_token"
        `);
    await queryRunner.query(`
            DROP TABLE "player_credential"
        `);
  }
}
