import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention (docs/decisions.md "Retention"): the table of purge runs (one row per purged table: the
 * lease that lets one instance at a time purge it, and its last run), and the indexes each purge
 * walks in order, so that a batch finds its oldest rows without scanning the table. The foreign
 * keys into player_session and server_session get full indexes: deleting a session checks (and
 * cascades to) the rows that name it, which was a scan per deleted row. Written by hand, checked by
 * the schema-drift test against the entities.
 */
export class Retention1795883000000 implements MigrationInterface {
  name = 'Retention1795883000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "retention_run" (
                "purge" character varying(64) NOT NULL,
                "lease_owner" character varying(64),
                "lease_until" TIMESTAMP WITH TIME ZONE,
                "last_started_at" TIMESTAMP WITH TIME ZONE,
                "last_finished_at" TIMESTAMP WITH TIME ZONE,
                "last_outcome" character varying(16),
                "last_deleted" bigint,
                "last_batches" integer,
                "last_instance" character varying(64),
                "last_error" character varying(256),
                CONSTRAINT "PK_retention_run" PRIMARY KEY ("purge")
            )
        `);
    await queryRunner.query(
      `CREATE INDEX "IDX_player_session_takeover_taken" ON "player_session_takeover" ("taken_at")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_player_session_takeover_from_session" ON "player_session_takeover" ("from_session_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_player_session_takeover_to_session" ON "player_session_takeover" ("to_session_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_player_session_server_session" ON "player_session" ("server_session_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_player_session_logged_out" ON "player_session" ("logged_out_at") WHERE logged_out_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_server_session_ended" ON "server_session" ("ended_at") WHERE ended_at IS NOT NULL`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_ws_connection_connected" ON "ws_connection" ("connected_at")`);
    await queryRunner.query(`CREATE INDEX "IDX_balance_history_created" ON "balance_history" ("created_at")`);
    await queryRunner.query(
      `CREATE INDEX "IDX_play_record_never_counts" ON "play_record" ("received_at") WHERE NOT pass AND cardinality(flags) = 0 AND voided_at IS NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_webhook_delivery_finished" ON "webhook_delivery" ("created_at") WHERE state IN ('delivered', 'failed')`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const index of [
      'IDX_webhook_delivery_finished',
      'IDX_play_record_never_counts',
      'IDX_balance_history_created',
      'IDX_ws_connection_connected',
      'IDX_server_session_ended',
      'IDX_player_session_logged_out',
      'IDX_player_session_server_session',
      'IDX_player_session_takeover_to_session',
      'IDX_player_session_takeover_from_session',
      'IDX_player_session_takeover_taken',
    ])
      await queryRunner.query(`DROP INDEX "public"."${index}"`);
    await queryRunner.query(`DROP TABLE "retention_run"`);
  }
}
