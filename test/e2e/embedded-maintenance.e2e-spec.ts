import { testDatabaseServerUrl } from '../setup/test-env';
import { LogCapture } from '../support/log-capture';
import { startTestApp, TestApp } from '../support/test-app';
import { eventually, sleep } from '../support/wait';

/**
 * The embedded database's upkeep (src/database/embedded/embedded-maintenance.service.ts;
 * docs/decisions.md "Embedded database: upkeep"): PGlite runs no autovacuum, so the service
 * analyzes and vacuums the tables past autovacuum's thresholds itself. On PostgreSQL it does
 * nothing (autovacuum's work there).
 */
const embeddedOnly = testDatabaseServerUrl() ? describe.skip : describe;
const postgresOnly = testDatabaseServerUrl() ? describe : describe.skip;

/** 200 rows written, then all updated: 200 dead rows and 400 changes, past both thresholds of an unanalyzed table. */
const CHURN = [
  'CREATE TABLE upkeep_probe (id int PRIMARY KEY, v int NOT NULL)',
  'INSERT INTO upkeep_probe SELECT g, 0 FROM generate_series(1, 200) g',
  'UPDATE upkeep_probe SET v = v + 1',
  // Statistics are sent when the session is idle, at most once a second: now.
  'SELECT pg_stat_force_next_flush()',
];

const STATS = `SELECT n_dead_tup::int AS dead, vacuum_count::int AS vacuums, analyze_count::int AS analyzes
                 FROM pg_stat_user_tables WHERE relname = 'upkeep_probe'`;

/** An app whose upkeep runs every second, with its debug lines captured, after CHURN. */
async function startChurned(): Promise<{ app: TestApp; logs: LogCapture }> {
  const logs = new LogCapture();
  const app = await startTestApp({
    env: { EMBEDDED_MAINTENANCE_SECONDS: '1', LOG_LEVEL: 'debug' },
    logDestination: logs,
  });
  try {
    for (const statement of CHURN) await app.sql(statement);
  } catch (error) {
    await app.close();
    throw error;
  }
  return { app, logs };
}

embeddedOnly('Embedded database upkeep', () => {
  it('vacuums and analyzes a table past autovacuum thresholds, and logs it', async () => {
    const { app, logs } = await startChurned();
    try {
      // Nothing else vacuums or analyzes here: without the upkeep both counts stay 0.
      await eventually(async () => {
        await app.sql('SELECT pg_stat_force_next_flush()');
        const [stats] = await app.sql<{ dead: number; vacuums: number; analyzes: number }>(STATS);
        return stats.vacuums >= 1 && stats.analyzes >= 1;
      }, 'upkeep_probe vacuumed and analyzed');
      expect((await app.sql(STATS))[0]).toMatchObject({ dead: 0 });
      const line = logs
        .records()
        .find((record) => record.context === 'EmbeddedMaintenance' && String(record.msg).includes('upkeep_probe'));
      expect(line?.msg).toMatch(/^Vacuumed and analyzed public\.upkeep_probe in \d+ ms$/);
      expect(line?.level).toBe('debug');
      // The planner's statistics are there: 200 rows, where a table never analyzed has none.
      const [table] = await app.sql<{ rows: number }>(
        `SELECT reltuples::int AS rows FROM pg_class WHERE relname = 'upkeep_probe'`,
      );
      expect(table.rows).toBe(200);

      // A table whose autovacuum is off (as an operator, or a test holding statistics, sets it) is left alone.
      await app.sql('CREATE TABLE upkeep_kept (id int PRIMARY KEY, v int NOT NULL) WITH (autovacuum_enabled = off)');
      await app.sql('INSERT INTO upkeep_kept SELECT g, 0 FROM generate_series(1, 200) g');
      await app.sql('UPDATE upkeep_kept SET v = v + 1');
      await app.sql('SELECT pg_stat_force_next_flush()');
      await sleep(2_500);
      expect(
        (
          await app.sql(`SELECT n_dead_tup::int AS dead, vacuum_count::int AS vacuums, analyze_count::int AS analyzes
                           FROM pg_stat_user_tables WHERE relname = 'upkeep_kept'`)
        )[0],
      ).toEqual({ dead: 200, vacuums: 0, analyzes: 0 });
    } finally {
      await app.close();
    }
  });
});

postgresOnly('Embedded database upkeep on PostgreSQL', () => {
  it('does nothing: autovacuum (or the operator) keeps PostgreSQL', async () => {
    const { app, logs } = await startChurned();
    try {
      await sleep(2_500);
      expect(logs.records().filter((record) => record.context === 'EmbeddedMaintenance')).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
