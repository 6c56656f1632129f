import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The four functions the service batches (StatementBatcher: login, collection sync, balance sync,
 * upload; docs/decisions.md "Logins, syncs and uploads batched under load") wait at most 5 s for
 * a row lock. Beyond that the statement fails with SQLSTATE 55P03 (lock_not_available) and writes
 * nothing: a batch then runs its calls again one by one, so only the call whose row is held fails
 * (503 UNAVAILABLE), instead of the whole batch reaching node-postgres' 15 s query timeout with its
 * outcome unknown. A function's SET applies while the function runs, to its own statements only.
 * Written by hand (the TypeORM CLI does not generate functions). Runs on PostgreSQL and on the
 * embedded PGlite (one session: nothing waits there).
 */
const FUNCTIONS = [
  'rhythmc_player_login(varchar, bigint, uuid, varchar, bpchar, uuid, bpchar, timestamptz, integer, bpchar, timestamptz, timestamptz)',
  'rhythmc_grant_collections(bpchar, bigint, uuid, timestamptz, varchar[], varchar[], varchar, jsonb)',
  'rhythmc_set_balance(bpchar, bigint, uuid, timestamptz, bigint, bigint, integer)',
  'rhythmc_upload_play(bigint, integer, bigint, bigint, float8, boolean, boolean, boolean, boolean, integer, boolean, boolean, bigint, float8, integer[], varchar, integer, varchar, varchar, uuid, bpchar, timestamptz, timestamptz, text[], bigint)',
];

export class BatchedFunctionsLockTimeout1795740000000 implements MigrationInterface {
  name = 'BatchedFunctionsLockTimeout1795740000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    for (const fn of FUNCTIONS) await queryRunner.query(`ALTER FUNCTION ${fn} SET lock_timeout = '5s'`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const fn of FUNCTIONS) await queryRunner.query(`ALTER FUNCTION ${fn} RESET lock_timeout`);
  }
}
