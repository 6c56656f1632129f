import 'reflect-metadata';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/database-options';
import { EmbeddedDatabase } from '../../src/database/embedded/embedded-database';
import { functionDrift, functionFiles } from '../support/function-files';
import { freshDatabase, TestDatabase } from '../support/test-app';

const MIGRATION_FILES = readdirSync(join(__dirname, '..', '..', 'migrations')).filter((file) => file.endsWith('.ts'));

/**
 * The entities, the migrations and the function files describe one schema: on a database built by every migration
 * (a clone of the run's migrated template), what `npm run migration:generate` would write from the
 * entities is nothing. A change of an entity without its migration, or the reverse, fails here with
 * the SQL TypeORM would run. Every function the migrations leave in the database has the text of
 * its file `src/<module>/sql/<name>.sql` (test/support/function-files.ts), and every file its
 * function: a migration that changes a function without its file, or the reverse, fails here with
 * the file's name. On PostgreSQL with DATABASE_URL, on the embedded database otherwise.
 */
describe('Schema drift: entities, migrations and function files agree', () => {
  let database: TestDatabase;
  let embedded: EmbeddedDatabase | null = null;
  let dataSource: DataSource;

  /** The statements TypeORM's schema builder would run to make the database match the entities. */
  async function pendingSchemaChanges(): Promise<string[]> {
    const sql = await dataSource.driver.createSchemaBuilder().log();
    return sql.upQueries.map((query) => query.query);
  }

  beforeAll(async () => {
    database = await freshDatabase();
    const url = database.env.DATABASE_URL;
    if (url === '') embedded = await EmbeddedDatabase.start(database.env.DATA_DIR);
    dataSource = await new DataSource(
      buildDataSourceOptions({ url: embedded?.url ?? url, embedded: embedded !== null }),
    ).initialize();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await embedded?.stop();
    await database?.drop();
  });

  it('builds the schema from every migration, and the entities ask for no change to it', async () => {
    expect(await dataSource.showMigrations()).toBe(false);
    const applied = await dataSource.query<{ count: number }[]>('SELECT count(*)::int AS count FROM migrations');
    expect(applied).toEqual([{ count: MIGRATION_FILES.length }]);
    expect(dataSource.migrations).toHaveLength(MIGRATION_FILES.length);

    expect(await pendingSchemaChanges()).toEqual([]);
  });

  it('notices a difference: an index the entities declare and the database lacks is reported', async () => {
    await dataSource.query('DROP INDEX "UQ_server_session_open_per_server"');
    expect(await pendingSchemaChanges()).toEqual([
      'CREATE UNIQUE INDEX "UQ_server_session_open_per_server" ON "server_session"  ("server_id") WHERE ended_at IS NULL',
    ]);
  });

  it('leaves every function as its file says, and no function without a file or file without a function', async () => {
    const files = functionFiles();
    expect(files.length).toBeGreaterThanOrEqual(24);
    expect(await functionDrift((sql) => dataSource.query(sql))).toEqual({
      changed: [],
      withoutFile: [],
      withoutFunction: [],
      twoFiles: [],
    });
  });

  it('notices a difference: a changed body, a function without a file and a file without a function', async () => {
    const improves = functionFiles().find((file) => file.name === 'rhythmc_best_improves');
    // The same function from its own file with one character changed (>= for >): only its text differs.
    await dataSource.query((improves as { text: string }).text.replace('p_acc > b_acc', 'p_acc >= b_acc'));
    await dataSource.query('CREATE FUNCTION rhythmc_unfiled() RETURNS integer LANGUAGE sql AS $$ SELECT 1 $$');
    await dataSource.query('DROP FUNCTION rhythmc_ensure_calendar_periods');
    expect(await functionDrift((sql) => dataSource.query(sql))).toEqual({
      changed: ['src/upload/sql/rhythmc_best_improves.sql'],
      withoutFile: ['rhythmc_unfiled'],
      withoutFunction: ['src/ranking/periods/sql/rhythmc_ensure_calendar_periods.sql'],
      twoFiles: [],
    });

    // A second signature of one name (an expand step) is a change of its file, until the file holds both.
    await dataSource.query((improves as { text: string }).text);
    await dataSource.query(
      'CREATE FUNCTION rhythmc_best_improves(p_acc float8, p_time_ms bigint) RETURNS boolean LANGUAGE sql AS $$ SELECT true $$',
    );
    expect((await functionDrift((sql) => dataSource.query(sql))).changed).toEqual([
      'src/upload/sql/rhythmc_best_improves.sql',
    ]);
  });
});
