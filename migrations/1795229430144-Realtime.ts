import { MigrationInterface, QueryRunner } from 'typeorm';

export class Realtime1795229430144 implements MigrationInterface {
  name = 'Realtime1795229430144';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "ws_connection" (
                "id" uuid NOT NULL,
                "instance_id" character varying(64) NOT NULL,
                "server_id" integer NOT NULL,
                "server_session_id" uuid NOT NULL,
                "remote_address" character varying(64),
                "connected_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "last_seen_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "closed_at" TIMESTAMP WITH TIME ZONE,
                "close_code" integer,
                CONSTRAINT "PK_d397196ccf7d403d7d36932a8e5" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "IDX_ws_connection_open" ON "ws_connection" ("instance_id")
            WHERE closed_at IS NULL
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."IDX_ws_connection_open"
        `);
    await queryRunner.query(`
            DROP TABLE "ws_connection"
        `);
  }
}
