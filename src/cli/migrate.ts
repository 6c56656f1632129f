/**
 * Migrations by hand, from the build (the production image has no TypeScript tooling):
 *
 *   node dist/src/cli/migrate.js show      # applied [X] and pending [ ] migrations
 *   node dist/src/cli/migrate.js run       # apply what is pending (the service also does this at start)
 *   node dist/src/cli/migrate.js revert    # revert the last applied migration (once per migration)
 *   node dist/src/cli/migrate.js grant <role>  # give the service's own role its privileges (two roles)
 *
 * On the database of MIGRATION_DATABASE_URL when set (a direct connection, docs/operations.md
 * "PgBouncer"), else DATABASE_URL, or without it on the embedded database in DATA_DIR (the
 * service must be stopped: the data dir is locked while it runs). `grant` needs PostgreSQL and
 * runs as the schema's owner (docs/operations.md "Two database roles"). `npm run migrate --
 * <command>` is the same. Exit 0 on success, 1 on failure, 2 on a usage mistake.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { ConfigError, loadConfig } from '../config/app-config';
import { buildDataSourceOptions, DatabaseTarget } from '../database/database-options';
import { EmbeddedDatabase } from '../database/embedded/embedded-database';
import { appliedMigrationNames, runMigrations } from '../database/migrate';
import { grantServiceRole, ROLE_NAME, ServiceRoleError } from '../database/service-role';

const USAGE =
  'usage: migrate show|run|revert  (DATABASE_URL, or the embedded database in DATA_DIR)\n' +
  "       migrate grant <role>      (DATABASE_URL of the schema's owner: the service's own role gets its privileges)";

const print = (line: string) => process.stdout.write(`${line}\n`);

async function main(command: string | undefined, role: string | undefined): Promise<number> {
  const usable =
    command === 'show' || command === 'run' || command === 'revert'
      ? role === undefined
      : command === 'grant' && role !== undefined && ROLE_NAME.test(role);
  if (!usable) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const config = loadConfig();
  if (command === 'grant' && config.databaseUrl === null) {
    process.stderr.write('migrate grant needs DATABASE_URL (PostgreSQL): the embedded database has one role\n');
    return 1;
  }
  const embedded = config.databaseUrl === null ? await EmbeddedDatabase.start(config.dataDir, 1) : null;
  // MIGRATION_DATABASE_URL: the direct connection, past a transaction pooler in DATABASE_URL.
  const direct = config.migrationDatabaseUrl;
  const target: DatabaseTarget = embedded
    ? { url: embedded.url, embedded: true }
    : direct
      ? { url: direct, embedded: false }
      : { url: config.databaseUrl as string, embedded: false, poolMode: config.databasePoolMode };
  print(`Database: ${embedded ? `embedded in ${config.dataDir}` : direct ? 'MIGRATION_DATABASE_URL' : 'DATABASE_URL'}`);
  const dataSource = await new DataSource({ ...buildDataSourceOptions(target), logging: false }).initialize();
  try {
    if (command === 'show') {
      const applied = await appliedMigrationNames(dataSource);
      for (const migration of dataSource.migrations)
        print(`${applied.has(migration.name ?? '') ? '[X]' : '[ ]'} ${migration.name ?? ''}`);
    } else if (command === 'grant') {
      try {
        for (const statement of await grantServiceRole(dataSource, role as string)) print(`${statement};`);
      } catch (error) {
        if (!(error instanceof ServiceRoleError)) throw error;
        process.stderr.write(`migrate grant: ${error.message}\n`);
        return 1;
      }
      print(
        `Granted ${role as string} the service's privileges; it owns nothing and may only read and append audit rows`,
      );
    } else if (command === 'run') {
      await runMigrations(dataSource, target.embedded, print, target.poolMode);
    } else {
      const before = await appliedCount(dataSource);
      await dataSource.undoLastMigration({ transaction: 'each' });
      print(before === 0 ? 'Nothing to revert' : `Reverted the last migration (${before - 1} still applied)`);
    }
    return 0;
  } finally {
    await dataSource.destroy();
    await embedded?.stop();
  }
}

async function appliedCount(dataSource: DataSource): Promise<number> {
  const rows = (await dataSource.query('SELECT count(*)::int AS n FROM migrations').catch(() => [{ n: 0 }])) as Array<{
    n: number;
  }>;
  return rows[0].n;
}

main(process.argv[2], process.argv[3]).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `${error instanceof ConfigError ? error.message : `migrate failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`}\n`,
    );
    process.exit(1);
  },
);
