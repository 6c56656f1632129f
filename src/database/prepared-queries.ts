import type { Pool, QueryResult } from 'pg';
import { DataSource, EntityManager, QueryFailedError, QueryRunner } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * Runs a hot statement as a named prepared statement on PostgreSQL: parsed and planned once per
 * pooled connection instead of at every call (planning the upload's statements costs more than
 * running them: 0.4–1.5 ms against 0.1 ms, EXPLAIN ANALYZE on the benchmark data), and without
 * TypeORM's query runner around it (a runner per call, its events and logger). `run` is one round
 * trip outside any transaction; `runIn` runs on a transaction's connection. The embedded database
 * runs them unnamed: its connections share one session, where named statements would collide.
 * Errors are TypeORM's `QueryFailedError`, as from `DataSource.query`, so the error mapping and
 * `pg-errors` read them the same way.
 */
export class PreparedQueries {
  constructor(
    private readonly dataSource: DataSource,
    private readonly named: boolean,
  ) {}

  /** `name` belongs to one text only (a second text under the same name fails on a connection that has the first). */
  async run<T>(name: string, text: string, params: unknown[]): Promise<T[]> {
    if (!this.named) return this.dataSource.query<T[]>(text, params);
    const pool = (this.dataSource.driver as PostgresDriver).master as Pool;
    return rowsOf<T>(pool.query({ name, text, values: params }), text, params);
  }

  /** As `run`, on the connection of `manager`'s transaction (TypeORM's query() has no named statements, hence its pg client). */
  async runIn<T>(manager: EntityManager, name: string, text: string, params: unknown[]): Promise<T[]> {
    const connection = (manager.queryRunner as unknown as { databaseConnection?: { query?: unknown } } | undefined)
      ?.databaseConnection;
    if (!this.named || typeof connection?.query !== 'function') return manager.query<T[]>(text, params);
    const query = connection.query as (config: {
      name: string;
      text: string;
      values: unknown[];
    }) => Promise<QueryResult>;
    return rowsOf<T>(query.call(connection, { name, text, values: params }), text, params);
  }

  /**
   * An unnamed statement on `manager`'s transaction with its own client-side timeout instead of
   * the pool's 15 s backstop: for the rare bulk statements that may take longer on a large network
   * (a period's archive at 1M players takes tens of seconds). Needs a transaction's connection.
   */
  async runLongIn<T>(manager: EntityManager, text: string, params: unknown[], timeoutMs: number): Promise<T[]> {
    const connection = (manager.queryRunner as unknown as { databaseConnection?: { query?: unknown } } | undefined)
      ?.databaseConnection;
    if (typeof connection?.query !== 'function') throw new Error('runLongIn runs inside a transaction only');
    const query = connection.query as (config: {
      text: string;
      values: unknown[];
      query_timeout: number;
    }) => Promise<QueryResult>;
    return rowsOf<T>(query.call(connection, { text, values: params, query_timeout: timeoutMs }), text, params);
  }

  /**
   * Bulk work in parts that read one snapshot and write rows of their own, on the database's cores
   * at once: each part (its statements in order) runs in a transaction of its own on another pooled
   * connection, importing the snapshot of `manager`'s transaction (`pg_export_snapshot`, `SET
   * TRANSACTION SNAPSHOT`: every part reads exactly what `manager` read at the export), and commits
   * before this resolves. A part's rows are therefore committed whatever `manager` does next: the
   * caller makes them unreadable until its own commit says otherwise, and each part clears what an
   * earlier failed try may have left. The parts run one after another in `manager`'s transaction
   * instead on the embedded database (one session), and when the pool cannot lend a connection for
   * every part within its acquire timeout (a saturated pool: the work is slower, not refused).
   * `settings` are `SET LOCAL` in every transaction (names and values of the caller's constants,
   * checked). Rejects with the first part's error after every part has ended.
   */
  async runLongInParts(
    manager: EntityManager,
    parts: ReadonlyArray<ReadonlyArray<{ text: string; params: unknown[] }>>,
    timeoutMs: number,
    settings: Readonly<Record<string, string>>,
  ): Promise<void> {
    const setLocal = Object.entries(settings).map(([name, value]) => {
      if (!/^[a-z_]+$/.test(name) || !/^[A-Za-z0-9]+$/.test(value)) throw new Error(`Bad setting ${name}=${value}`);
      return `SET LOCAL ${name} = '${value}'`;
    });
    for (const set of setLocal) await manager.query(set);
    const runners = this.named && parts.length > 1 ? await this.lend(parts.length) : null;
    if (!runners) {
      for (const part of parts)
        for (const { text, params } of part) await this.runLongIn(manager, text, params, timeoutMs);
      return;
    }
    try {
      const [{ snapshot }] = await manager.query<Array<{ snapshot: string }>>(
        'SELECT pg_export_snapshot() AS snapshot',
      );
      if (!/^[0-9A-Fa-f-]+$/.test(snapshot)) throw new Error(`Unexpected snapshot id ${snapshot}`);
      const results = await Promise.allSettled(
        parts.map(async (part, i) => {
          const runner = runners[i];
          await runner.startTransaction('REPEATABLE READ');
          try {
            // First in the transaction: before any query, as SET TRANSACTION SNAPSHOT requires.
            await runner.query(`SET TRANSACTION SNAPSHOT '${snapshot}'`);
            for (const set of setLocal) await runner.query(set);
            for (const { text, params } of part) await this.runLongIn(runner.manager, text, params, timeoutMs);
            await runner.commitTransaction();
          } catch (error) {
            if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
            throw error;
          }
        }),
      );
      const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      await Promise.all(runners.map((runner) => runner.release()));
    }
  }

  /** `count` pooled connections, or null (none kept) when the pool cannot lend them all within its acquire timeout. */
  private async lend(count: number): Promise<QueryRunner[] | null> {
    const runners: QueryRunner[] = [];
    try {
      for (let i = 0; i < count; i++) {
        const runner = this.dataSource.createQueryRunner('master');
        runners.push(runner);
        await runner.connect();
      }
      return runners;
    } catch {
      await Promise.all(runners.map((runner) => runner.release().catch(() => undefined)));
      return null;
    }
  }
}

/** The rows of a pg query, its failure as TypeORM's QueryFailedError (as DataSource.query throws it). */
export async function rowsOf<T>(query: Promise<QueryResult>, text: string, params: unknown[]): Promise<T[]> {
  try {
    return (await query).rows as T[];
  } catch (error) {
    throw new QueryFailedError(text, params, error as Error);
  }
}
