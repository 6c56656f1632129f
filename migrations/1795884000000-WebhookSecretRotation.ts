import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rotating a webhook's secret with an overlap (docs/decisions.md "Webhooks"): the secret it
 * replaced keeps signing, beside the new one, until `previous_secret_expires_at`; both are null
 * when there is none. Written by hand.
 */
export class WebhookSecretRotation1795884000000 implements MigrationInterface {
  name = 'WebhookSecretRotation1795884000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "webhook" ADD "previous_secret" character varying(128)`);
    await queryRunner.query(`ALTER TABLE "webhook" ADD "previous_secret_expires_at" TIMESTAMP WITH TIME ZONE`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "webhook" DROP COLUMN "previous_secret_expires_at"`);
    await queryRunner.query(`ALTER TABLE "webhook" DROP COLUMN "previous_secret"`);
  }
}
