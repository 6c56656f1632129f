import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `database_identity`: one random id, written once here, that says which database this is. The
 * Redis rank index records it with every build and is rebuilt when it finds another one
 * (docs/decisions.md "A Redis index bound to its database"). A backup carries it (a restore is the
 * same database, told apart by its watermark); a database created afresh, by these migrations,
 * gets its own. Written by hand; runs on PostgreSQL and on the embedded PGlite (gen_random_uuid()
 * is core since PostgreSQL 13).
 */
export class DatabaseIdentity1795761000000 implements MigrationInterface {
  name = 'DatabaseIdentity1795761000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "database_identity" (
                "id" uuid NOT NULL,
                CONSTRAINT "PK_database_identity" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            INSERT INTO "database_identity" ("id") VALUES (gen_random_uuid())
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP TABLE "database_identity"
        `);
  }
}
