import { join } from 'node:path';
import { Client, ClientConfig } from 'pg';
import type { DataSourceOptions } from 'typeorm';
import type { QueryCounter } from './query-counter';

/** Opening a connection (TCP + startup) gives up after this; an unreachable database answers 503 this fast. */
export const CONNECT_TIMEOUT_MS = 2_000;
/** Waiting for a free pooled connection gives up after this (a saturated pool, not a dead database). */
export const ACQUIRE_TIMEOUT_MS = 5_000;

/**
 * The pool's client class. pg-pool uses its connectionTimeoutMillis both for waiting for a free
 * client and for opening a new one. A dead database should fail fast while a busy pool may queue
 * longer, so the client opens its connection under its own, shorter bound. With a counter, every
 * query the client sends (a round trip) is counted.
 */
function clientClass(counter: QueryCounter | undefined): typeof Client {
  return class QuickConnectClient extends Client {
    constructor(config: ClientConfig) {
      super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
      if (counter) {
        const query = this.query.bind(this) as (...args: unknown[]) => unknown;
        this.query = ((...args: unknown[]) => {
          counter.queries++;
          return query(...args);
        }) as Client['query'];
      }
    }
  };
}

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
export function buildDataSourceOptions(target: DatabaseTarget, counter?: QueryCounter): DataSourceOptions {
  return {
    type: 'postgres',
    url: target.url,
    entities: [join(__dirname, '..', '**', '*.entity.{ts,js}')],
    migrations: [join(__dirname, '..', '..', 'migrations', '*.{ts,js}')],
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: false,
    // uuid keys (@PrimaryGeneratedColumn('uuid')) default to gen_random_uuid(), core since
    // PostgreSQL 13, as the migrations wrote them (uuid-ossp's uuid_generate_v4() would differ). No
    // CREATE EXTENSION at connect: the migrations own the schema, and PGlite ships no extension.
    uuidExtension: 'pgcrypto',
    installExtensions: false,
    // Failures are logged once by the exception filter; TypeORM's own log would print query parameters.
    logging: false,
    extra: {
      // Embedded: ONE connection. pglite-socket runs every connection on a single PostgreSQL
      // session and interleaves the Parse/Bind/Execute messages of concurrent connections, so
      // two parameterised queries in flight steal each other's unnamed statement ("portal does
      // not exist") and can wedge its queue. PGlite executes one query at a time anyway.
      max: target.embedded ? 1 : 10,
      Client: clientClass(counter),
      connectionTimeoutMillis: ACQUIRE_TIMEOUT_MS,
      // Client-side backstop: PGlite ignores statement_timeout, and a hung query must not hang a request.
      query_timeout: 15_000,
      application_name: 'rhythmc-backend',
    },
  };
}
