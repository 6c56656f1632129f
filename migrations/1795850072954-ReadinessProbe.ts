import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `readiness_probe`: one row that every readiness check writes (GET /health/ready), so that
 * readiness fails while the database refuses writes, not only while it cannot be reached
 * (docs/decisions.md "Readiness"). Generated from ReadinessProbeEntity; the row inserted by hand.
 */
export class ReadinessProbe1795850072954 implements MigrationInterface {
  name = 'ReadinessProbe1795850072954';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "readiness_probe" (
                "id" smallint NOT NULL,
                "probed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_0f04cdd31c44038732285352fd8" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`INSERT INTO "readiness_probe" ("id") VALUES (1)`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP TABLE "readiness_probe"
        `);
  }
}
