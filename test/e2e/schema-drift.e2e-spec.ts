import 'reflect-metadata';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/database-options';
import { EmbeddedDatabase } from '../../src/database/embedded/embedded-database';
import { freshDatabase, TestDatabase } from '../support/test-app';

const MIGRATION_FILES = readdirSync(join(__dirname, '..', '..', 'migrations')).filter((file) => file.endsWith('.ts'));

/**
 * The entities and the migrations describe one schema: on a database built by every migration
 * (a clone of the run's migrated template), what `npm run migration:generate` would write from the
 * entities is nothing. A change of an entity without its migration, or the reverse, fails here with
 * the SQL TypeORM would run. On PostgreSQL with DATABASE_URL, on the embedded database otherwise.
 */
describe('Schema drift: entities and migrations agree', () => {
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
});
