import { join } from 'node:path';
import { Client, ClientConfig, PoolConfig } from 'pg';
import type { DataSourceOptions } from 'typeorm';
import type { DatabasePoolMode } from '../config/app-config';
import { databaseFailureOf } from '../common/errors/database-errors';
import type { QueryCounter } from './query-counter';
import type { WriteRefusals } from './write-refusals';

/** Opening a connection (TCP + startup) gives up after this; an unreachable database answers 503 this fast. */
export const CONNECT_TIMEOUT_MS = 2_000;
/** Waiting for a free pooled connection gives up after this (a saturated pool, not a dead database). */
export const ACQUIRE_TIMEOUT_MS = 5_000;

/** What the pool's connections report: round trips (metrics), refusals (readiness). */
export interface ConnectionWatch {
  counter?: QueryCounter;
  refusals?: WriteRefusals;
}

/**
 * The pool's client class. pg-pool uses its connectionTimeoutMillis both for waiting for a free
 * client and for opening a new one. A dead database should fail fast while a busy pool may queue
 * longer, so the client opens its connection under its own, shorter bound. With a counter, every
 * query the client sends (a round trip) is counted; with `refusals`, a statement refused for want of
 * a resource or because the database is read-only is noted. A query that ran into the query timeout
 * closes its connection: pg keeps waiting for the answer of a query it already sent, so every later
 * query on that connection would wait behind it (a pool of one stuck for good), and the pool opens a
 * new one instead. A write refused as read-only (25006) closes its connection too: a session keeps
 * the read-only default it started with (`ALTER DATABASE … SET default_transaction_read_only`, a
 * standby's session), so a busy pool would keep refusing writes after the database takes them again;
 * a new session reads the database's setting as it is now (docs/decisions.md "Readiness").
 */
function clientClass({ counter, refusals }: ConnectionWatch): typeof Client {
  return class WatchedClient extends Client {
    constructor(config: ClientConfig) {
      super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
      const query = this.query.bind(this) as (...args: unknown[]) => unknown;
      this.query = ((...args: unknown[]) => {
        if (counter) counter.queries++;
        const last = args.length - 1;
        const callback = args[last];
        if (typeof callback === 'function') {
          args[last] = (error: unknown, result: unknown) => {
            if (error) this.failed(error);
            (callback as (error: unknown, result: unknown) => void)(error, result);
          };
          return query(...args);
        }
        const result = query(...args);
        const settled = result as { catch?: (onRejected: (error: unknown) => void) => unknown } | undefined;
        if (typeof settled?.catch === 'function') settled.catch((error: unknown) => this.failed(error));
        return result;
      }) as Client['query'];
    }

    private failed(error: unknown): void {
      const failure = databaseFailureOf(error);
      const message = (error as { message?: unknown } | null)?.message;
      if (refusals && (failure === 'resource' || failure === 'read-only'))
        refusals.note(typeof message === 'string' ? message : String(error));
      if (message === 'Query read timeout' || failure === 'read-only') {
        (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      }
    }
  };
}

/** The DatabaseTarget the app runs on (for a pool of its own: the webhook delivery worker). */
export const DATABASE_TARGET = Symbol('DATABASE_TARGET');

export interface DatabaseTarget {
  url: string;
  /** The embedded PGlite shares one PostgreSQL session across all pool connections. */
  embedded: boolean;
  /** The embedded database's online backup (EmbeddedDatabase.backup); absent on PostgreSQL. */
  backup?: () => Promise<Uint8Array>;
  /**
   * How `url`'s connections are pooled (DATABASE_POOL_MODE): `transaction` behind PgBouncer's
   * transaction pooling, where a connection is only ours for one transaction. Absent: `session`.
   */
  poolMode?: DatabasePoolMode;
  /** A direct connection for the start-up migrations (MIGRATION_DATABASE_URL); absent: `url`. */
  migrationUrl?: string;
  /** A streaming replica for the reads that tolerate lag (DATABASE_READ_URL); absent: none. */
  read?: ReadReplicaTarget;
}

/** DATABASE_READ_URL and its settings (docs/decisions.md "Read replica"). */
export interface ReadReplicaTarget {
  url: string;
  poolSize: number;
  maxLagSeconds: number;
}

/**
 * The replica's pool (DATABASE_READ_URL): the primary pool's client class, timeouts and query
 * timeout, its own size. A plain pg pool, not a TypeORM data source: the replica only runs the
 * read repositories' statements, and the service must start while it is down (a data source
 * connects at initialisation).
 */
export function buildReadPoolConfig(target: ReadReplicaTarget, watch: ConnectionWatch = {}): PoolConfig {
  return {
    connectionString: target.url,
    max: target.poolSize,
    Client: clientClass(watch),
    connectionTimeoutMillis: ACQUIRE_TIMEOUT_MS,
    query_timeout: 15_000,
    application_name: 'rhythmc-backend-read',
  };
}

/**
 * Whether the hot statements may be named prepared statements: on PostgreSQL, unless a
 * transaction pooler sits between (PgBouncer before 1.21, Debian 12's 1.18, does not carry them
 * from one server connection to another: "prepared statement does not exist"), or on the embedded
 * database (one session behind every connection: named statements would collide).
 */
export function namedStatementsOn(target: DatabaseTarget): boolean {
  return !target.embedded && (target.poolMode ?? 'session') === 'session';
}

/**
 * The one TypeORM options builder, used by the app and by the migration CLI
 * (src/database/data-source.ts). `synchronize` is never on: the schema only changes
 * through reviewed migrations in migrations/.
 */
export function buildDataSourceOptions(target: DatabaseTarget, watch: ConnectionWatch = {}): DataSourceOptions {
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
      // Embedded: ONE connection. Every connection runs on PGlite's single PostgreSQL session,
      // one statement at a time (the worker's SequenceQueue keeps each query sequence whole:
      // docs/decisions.md "One session, whole sequences"), so more connections would only queue there.
      max: target.embedded ? 1 : 10,
      Client: clientClass(watch),
      connectionTimeoutMillis: ACQUIRE_TIMEOUT_MS,
      // Client-side backstop: PGlite ignores statement_timeout, and a hung query must not hang a request.
      query_timeout: 15_000,
      application_name: 'rhythmc-backend',
    },
  };
}
