import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The admin audit log refuses TRUNCATE too (docs/decisions.md "Audit log"): a statement trigger
 * runs the append-only function of AdminAudit1795628298714 before any TRUNCATE of the table, so
 * even a single-role set-up (the embedded database, or a service that owns its tables) cannot
 * empty it through an ordinary statement. The table's owner can still drop or disable the
 * triggers; the two-role set-up of docs/operations.md keeps the service from being that owner.
 * Written by hand (the TypeORM CLI does not generate triggers). Runs on PostgreSQL and PGlite.
 */
export class AuditTruncateGuard1795764400000 implements MigrationInterface {
  name = 'AuditTruncateGuard1795764400000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TRIGGER "TRG_admin_audit_no_truncate"
            BEFORE TRUNCATE ON "admin_audit"
            FOR EACH STATEMENT EXECUTE FUNCTION "admin_audit_append_only"()
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP TRIGGER "TRG_admin_audit_no_truncate" ON "admin_audit"
        `);
  }
}
