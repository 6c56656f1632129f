import { MigrationInterface, QueryRunner } from 'typeorm';

export class Resources1795230665198 implements MigrationInterface {
  name = 'Resources1795230665198';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "resource_file" (
                "path" character varying(1024) COLLATE "C" NOT NULL,
                "kind" character varying(8) NOT NULL,
                "size" bigint NOT NULL,
                "mtime_ns" bigint NOT NULL,
                "sha256" character(64) NOT NULL,
                "sha1" character(40),
                "hashed_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "CHK_resource_file_kind" CHECK ("kind" IN ('data', 'lang', 'pack')),
                CONSTRAINT "PK_c8e9add51b6e18025387a224439" PRIMARY KEY ("path")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "resource_index_state" (
                "id" smallint NOT NULL,
                "version" bigint NOT NULL,
                "changed_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "CHK_resource_index_state_single_row" CHECK ("id" = 1),
                CONSTRAINT "PK_b19f8bbeefa2a5afeb9a76e5f3b" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "resource_pack" (
                "name" character varying(128) COLLATE "C" NOT NULL,
                "display_name" character varying(256) NOT NULL,
                "type" character varying(16) NOT NULL,
                "available_songs" integer array NOT NULL,
                "file" character varying(1024) NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "CHK_resource_pack_type" CHECK ("type" IN ('FULL', 'CHAPTER', 'SONG')),
                CONSTRAINT "PK_54a528fffac50b7ddf24f92a1e6" PRIMARY KEY ("name")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "resource_signing_key" (
                "id" smallint NOT NULL,
                "secret" character(64) NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "CHK_resource_signing_key_single_row" CHECK ("id" = 1),
                CONSTRAINT "PK_c61e6a2fc7c70c4cbacd53ae2a2" PRIMARY KEY ("id")
            )
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP TABLE "resource_signing_key"
        `);
    await queryRunner.query(`
            DROP TABLE "resource_pack"
        `);
    await queryRunner.query(`
            DROP TABLE "resource_index_state"
        `);
    await queryRunner.query(`
            DROP TABLE "resource_file"
        `);
  }
}
