import { join } from 'node:path';
import type { DataSourceOptions } from 'typeorm';

export interface DatabaseTarget {
  url: string;
  /** The embedded PGlite shares one PostgreSQL session across all pool connections. */
  embedded: boolean;
}

/**
 * The one TypeORM options builder, used by the app and by the migration CLI
 * (src/database/data-source.ts). `synchronize` is never on: the schema only changes
 * through reviewed migrations in migrations/.
 */
export function buildDataSourceOptions(target: DatabaseTarget): DataSourceOptions {
  return {
    type: 'postgres',
    url: target.url,
    entities: [join(__dirname, '..', '**', '*.entity.{ts,js}')],
    migrations: [join(__dirname, '..', '..', 'migrations', '*.{ts,js}')],
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: false,
    // Failures are logged once by the exception filter; TypeORM's own log would print query parameters.
    logging: false,
    extra: {
      // Embedded: ONE connection. pglite-socket runs every connection on a single PostgreSQL
      // session and interleaves the Parse/Bind/Execute messages of concurrent connections, so
      // two parameterised queries in flight steal each other's unnamed statement ("portal does
      // not exist") and can wedge its queue. PGlite executes one query at a time anyway.
      max: target.embedded ? 1 : 10,
      connectionTimeoutMillis: 5_000,
      // Client-side backstop: PGlite ignores statement_timeout, and a hung query must not hang a request.
      query_timeout: 15_000,
      application_name: 'rhythmc-backend',
    },
  };
}
