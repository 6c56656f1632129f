import { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1795227867381 implements MigrationInterface {
  name = 'Foundation1795227867381';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "server_credential" (
                "server_id" integer NOT NULL,
                "token_hash" character(64) NOT NULL,
                "issued_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "UQ_dda56c019dbfdc26e5eb460811d" UNIQUE ("token_hash"),
                CONSTRAINT "PK_aa2bb8e9b95eba258e14dad4844" PRIMARY KEY ("server_id")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "server_session" (
                "id" uuid NOT NULL DEFAULT gen_random_uuid(),
                "server_id" integer NOT NULL,
                "token_hash" character(64) NOT NULL,
                "token_expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "plugin_version" integer NOT NULL,
                "plugin_sha" character varying(128) NOT NULL,
                "client_ip" character varying(64),
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "refreshed_at" TIMESTAMP WITH TIME ZONE,
                "ended_at" TIMESTAMP WITH TIME ZONE,
                "end_reason" character varying(16),
                CONSTRAINT "UQ_0898fb62a3f17b55a066f411721" UNIQUE ("token_hash"),
                CONSTRAINT "PK_d1f3b4a4db3ab8e03155a754314" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "UQ_server_session_open_per_server" ON "server_session" ("server_id")
            WHERE ended_at IS NULL
        `);
    await queryRunner.query(`
            CREATE TABLE "game_server" (
                "id" SERIAL NOT NULL,
                "name" character varying(64) NOT NULL,
                "country" character varying(64) NOT NULL,
                "ip" character varying(64),
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "UQ_c5358a9184476a48b6979dc95c0" UNIQUE ("name"),
                CONSTRAINT "PK_cecf75ff4abc678a086839960a1" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "service_setting" (
                "key" character varying(64) NOT NULL,
                "value" jsonb NOT NULL,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_2c7b69f57c832a2886ee3b7f659" PRIMARY KEY ("key")
            )
        `);
    await queryRunner.query(`
            ALTER TABLE "server_credential"
            ADD CONSTRAINT "FK_aa2bb8e9b95eba258e14dad4844" FOREIGN KEY ("server_id") REFERENCES "game_server"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "server_session"
            ADD CONSTRAINT "FK_5313954b3e4a4608d34ff1b7a44" FOREIGN KEY ("server_id") REFERENCES "game_server"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "server_session" DROP CONSTRAINT "FK_5313954b3e4a4608d34ff1b7a44"
        `);
    await queryRunner.query(`
            ALTER TABLE "server_credential" DROP CONSTRAINT "FK_aa2bb8e9b95eba258e14dad4844"
        `);
    await queryRunner.query(`
            DROP TABLE "service_setting"
        `);
    await queryRunner.query(`
            DROP TABLE "game_server"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."UQ_server_session_open_per_server"
        `);
    await queryRunner.query(`
            DROP TABLE "server_session"
        `);
    await queryRunner.query(`
            DROP TABLE "server_credential"
        `);
  }
}
