import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The personal-best and first-place trigger on player_chart_best fires on an UPDATE only when the
 * statement sets record_id (a new best always does): rhythmc_webhook_best returns at once for any
 * other update (`NEW.record_id <= OLD.record_id`), but only after two lookups of the webhook table,
 * once per row. A home server move (rhythmc_player_move_home) rewrites every best of the player,
 * hundreds of rows for a regular (docs/benchmarks.md "Scoped boards: the cost of a home move").
 * The events are the same. An expand step: the function is unchanged. Written by hand.
 */
export class BestWebhookTriggerOnRecord1795889000000 implements MigrationInterface {
  name = 'BestWebhookTriggerOnRecord1795889000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_player_chart_best_webhook" ON "player_chart_best"`);
    await queryRunner.query(`
            CREATE TRIGGER "TRG_player_chart_best_webhook"
            AFTER INSERT OR UPDATE OF record_id ON "player_chart_best"
            FOR EACH ROW EXECUTE FUNCTION rhythmc_webhook_best()
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "TRG_player_chart_best_webhook" ON "player_chart_best"`);
    await queryRunner.query(`
            CREATE TRIGGER "TRG_player_chart_best_webhook"
            AFTER INSERT OR UPDATE ON "player_chart_best"
            FOR EACH ROW EXECUTE FUNCTION rhythmc_webhook_best()
        `);
  }
}
