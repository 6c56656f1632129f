import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { TransactionService } from '../database/transaction.service';
import { PURGE_BATCH_SETTINGS, purgeBatchSql, RetentionPurge } from './retention.map';
import { RetentionRunEntity } from './entities/retention-run.entity';

export interface RunRecord {
  outcome: 'ok' | 'error' | 'stopped';
  deleted: number;
  batches: number;
  instance: string;
  error: string | null;
}

/**
 * The SQL of retention: the lease of each purged table (`retention_run`) and the batches. Reads
 * and deletes every module's old rows through retention.map.ts, on purpose (docs/architecture.md
 * "Modules": one map, held against the schema by a test).
 */
@Injectable()
export class RetentionRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly tx: TransactionService,
  ) {}

  /**
   * Takes the table's lease for `owner` when nobody holds it (or its holder's lease ran out: a run
   * that died), with the cut-off `days` before the database's clock (every instance cuts at the
   * same time). Null: another run holds it.
   */
  async claim(table: string, owner: string, leaseSeconds: number, days: number): Promise<Date | null> {
    const rows = await this.dataSource.query<Array<{ cutoff: Date }>>(
      `INSERT INTO retention_run (purge, lease_owner, lease_until, last_started_at)
       VALUES ($1, $2, now() + make_interval(secs => $3), now())
       ON CONFLICT (purge) DO UPDATE
          SET lease_owner = EXCLUDED.lease_owner, lease_until = EXCLUDED.lease_until, last_started_at = now()
        WHERE retention_run.lease_until IS NULL OR retention_run.lease_until < now()
       RETURNING now() - make_interval(days => $4) AS cutoff`,
      [table, owner, leaseSeconds, days],
    );
    return rows.length === 1 ? rows[0].cutoff : null;
  }

  /** Extends the lease; false when `owner` no longer holds it. */
  async renew(table: string, owner: string, leaseSeconds: number): Promise<boolean> {
    const rows = await this.dataSource.query<Array<{ purge: string }>>(
      // A SELECT over the UPDATE: TypeORM answers an UPDATE's rows with its count beside them.
      `WITH renewed AS (
         UPDATE retention_run SET lease_until = now() + make_interval(secs => $3)
          WHERE purge = $1 AND lease_owner = $2 RETURNING purge
       )
       SELECT purge FROM renewed`,
      [table, owner, leaseSeconds],
    );
    return rows.length === 1;
  }

  /** Records the run and gives the lease back (only the holder's: a run that lost it writes nothing). */
  async finish(table: string, owner: string, run: RunRecord): Promise<void> {
    await this.dataSource.query(
      `UPDATE retention_run
          SET lease_owner = NULL, lease_until = NULL, last_finished_at = now(), last_outcome = $3,
              last_deleted = $4, last_batches = $5, last_instance = $6, last_error = $7
        WHERE purge = $1 AND lease_owner = $2`,
      [table, owner, run.outcome, run.deleted, run.batches, run.instance, run.error?.slice(0, 256) ?? null],
    );
  }

  /**
   * One batch in one short transaction (its settings: PURGE_BATCH_SETTINGS): at most `limit` of
   * the purge's rows that ended before `cutoff`, oldest first; answers how many went.
   */
  deleteBatch(purge: RetentionPurge, cutoff: Date, limit: number): Promise<number> {
    return this.tx.run(async (manager) => {
      await manager.query(PURGE_BATCH_SETTINGS);
      const rows = await manager.query<Array<{ deleted: number }>>(purgeBatchSql(purge), [cutoff, limit]);
      return rows[0].deleted;
    });
  }

  /** Every table's last run (the admin view). */
  lastRuns(): Promise<RetentionRunEntity[]> {
    return this.dataSource.getRepository(RetentionRunEntity).find({ order: { purge: 'ASC' } });
  }
}
