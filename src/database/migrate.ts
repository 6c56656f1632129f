import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { DatabasePoolMode } from '../config/app-config';

const logger = new Logger('Migrations');

/** Where the lines of a migration run go: the service's log by default. */
export type MigrationLog = (line: string) => void;

/** Applies what is pending and says what it did: a line per migration, or that the schema is up to date. */
async function applyPending(dataSource: DataSource, log: MigrationLog): Promise<void> {
  const started = Date.now();
  if (!(await dataSource.showMigrations())) {
    log(`Schema up to date (${dataSource.migrations.length} migrations)`);
    return;
  }
  log('Applying pending migrations');
  const applied = await dataSource.runMigrations({ transaction: 'each' });
  for (const migration of applied) log(`Applied ${migration.name}`);
  log(
    `Applied ${applied.length} migrations in ${Date.now() - started} ms; schema up to date (${dataSource.migrations.length} migrations)`,
  );
}

/** Arbitrary constant: instances starting together take turns to migrate. */
const MIGRATION_LOCK_KEY = 727_001;

/**
 * Runs pending migrations at start-up. On a real PostgreSQL several instances may start at
 * once, so the run holds an advisory lock. The embedded database is single-process (its data dir
 * is locked) and shares one session across connections, so it needs no lock.
 *
 * `poolMode` is how the data source's connections are pooled (DATABASE_POOL_MODE). `session` (a
 * direct connection): a session lock, taken and released on one connection. `transaction`
 * (through PgBouncer's transaction pooling, no MIGRATION_DATABASE_URL): a session lock would
 * stay on whichever server connection ran it, so the lock is a transaction's, held by a
 * transaction kept open on its own connection (PgBouncer keeps a server connection to a client
 * while its transaction lasts) until the migrations, on other connections, are done.
 */
export async function runMigrations(
  dataSource: DataSource,
  embedded: boolean,
  log: MigrationLog = (line) => logger.log(line),
  poolMode: DatabasePoolMode = 'session',
): Promise<void> {
  if (embedded) {
    await applyPending(dataSource, log);
    return;
  }
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    if (poolMode === 'transaction') {
      await runner.startTransaction();
      try {
        // The lock's transaction waits, idle, while the migrations run: a server-side idle
        // timeout must not end it half-way.
        await runner.query('SET LOCAL idle_in_transaction_session_timeout = 0');
        await runner.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
        await applyPending(dataSource, log);
      } finally {
        // Releases the lock (the transaction wrote nothing); a lost connection released it already.
        await runner.rollbackTransaction().catch(() => undefined);
      }
      return;
    }
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await applyPending(dataSource, log);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
  }
}

/** The names of the migrations applied to the database (none when it has no migrations table). */
export async function appliedMigrationNames(dataSource: DataSource): Promise<Set<string>> {
  const rows = (await dataSource.query('SELECT name FROM migrations').catch(() => [])) as Array<{ name: string }>;
  return new Set(rows.map((row) => row.name));
}

/** The migrations of this build not yet applied to the database, oldest first. */
export async function pendingMigrationNames(dataSource: DataSource): Promise<string[]> {
  const applied = await appliedMigrationNames(dataSource);
  return dataSource.migrations.map((migration) => migration.name ?? '').filter((name) => !applied.has(name));
}

/**
 * MIGRATE_ON_START=false (the two-role set-up, docs/operations.md): the service's role may not
 * change the schema, so the start only checks that the schema's owner applied every migration of
 * this build, and stops naming the pending ones otherwise.
 */
export async function assertNoPendingMigrations(
  dataSource: DataSource,
  log: MigrationLog = (line) => logger.log(line),
): Promise<void> {
  const pending = await pendingMigrationNames(dataSource);
  if (pending.length > 0) {
    throw new Error(
      `${pending.length} migration${pending.length === 1 ? ' is' : 's are'} pending (${pending.join(', ')}) and MIGRATE_ON_START is false: apply them as the schema's owner (node dist/src/cli/migrate.js run with the owner's DATABASE_URL), then start the service again`,
    );
  }
  log(`Schema up to date (${dataSource.migrations.length} migrations; MIGRATE_ON_START=false, not applied here)`);
}
