import type { Pool, QueryResult } from 'pg';
import { DataSource, QueryFailedError } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * Runs a hot statement outside any transaction in one round trip, as a named prepared statement
 * on PostgreSQL: parsed and planned once per pooled connection instead of at every call, and
 * without TypeORM's query runner around it (a runner per call, its events and logger). The
 * embedded database runs it unnamed: its connections share one session, where named statements
 * would collide. Errors are TypeORM's `QueryFailedError`, as from `DataSource.query`, so the
 * error mapping and `pg-errors` read them the same way. For statements inside a transaction use
 * the transaction's manager.
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
    let result: QueryResult;
    try {
      result = await pool.query({ name, text, values: params });
    } catch (error) {
      throw new QueryFailedError(text, params, error as Error);
    }
    return result.rows as T[];
  }
}
