import type { DataSource } from 'typeorm';

/** Arbitrary constant: instances starting together take turns to migrate. */
const MIGRATION_LOCK_KEY = 727_001;

/**
 * Runs pending migrations at start-up. On a real PostgreSQL several instances may start at
 * once, so the run holds a session advisory lock. The embedded database is single-process
 * (its data dir is locked) and shares one session across connections, so it needs no lock.
 */
export async function runMigrations(dataSource: DataSource, embedded: boolean): Promise<void> {
  if (embedded) {
    await dataSource.runMigrations({ transaction: 'each' });
    return;
  }
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
  }
}
