import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runSourceScript, ScriptResult } from '../support/source-script';
import { freshDatabase, TestDatabase } from '../support/test-app';

const ROOT = join(__dirname, '..', '..');

type CliResult = ScriptResult;

/** The migration CLI as the production image runs it (here from its TypeScript source), on one database. */
const migrate = (args: string[], env: Record<string, string>) => runSourceScript('src/cli/migrate.ts', args, env);

/** Migration class names in order: `<Name><timestamp>` from `<timestamp>-<Name>.ts`. */
const MIGRATIONS = readdirSync(join(ROOT, 'migrations'))
  .filter((file) => file.endsWith('.ts'))
  .sort()
  .map((file) => {
    const [, timestamp, name] = /^(\d+)-(.+)\.ts$/.exec(file) as RegExpExecArray;
    return `${name}${timestamp}`;
  });

describe('Migration CLI (node dist/src/cli/migrate.js)', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  const listed = (result: CliResult) => result.stdout.split('\n').filter((line) => /^\[[ X]\] /.test(line));

  it('shows, reverts the last migration and applies it again, on the database the service would use', async () => {
    const shown = await migrate(['show'], database.env);
    expect(shown.code).toBe(0);
    expect(listed(shown)).toEqual(MIGRATIONS.map((name) => `[X] ${name}`));

    const reverted = await migrate(['revert'], database.env);
    expect({ code: reverted.code, stderr: reverted.stderr }).toEqual({ code: 0, stderr: '' });
    expect(reverted.stdout).toContain(`Reverted the last migration (${MIGRATIONS.length - 1} still applied)`);
    expect(listed(await migrate(['show'], database.env))).toEqual(
      MIGRATIONS.map((name, i) => `${i === MIGRATIONS.length - 1 ? '[ ]' : '[X]'} ${name}`),
    );

    const ran = await migrate(['run'], database.env);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain(`Applied ${MIGRATIONS[MIGRATIONS.length - 1]}`);
    expect(listed(await migrate(['show'], database.env))).toEqual(MIGRATIONS.map((name) => `[X] ${name}`));
  }, 300_000);

  it('refuses an unknown command with its usage and exit code 2', async () => {
    const result = await migrate(['drop'], database.env);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'usage: migrate show|run|revert  (DATABASE_URL, or the embedded database in DATA_DIR)\n' +
        "       migrate grant <role>      (DATABASE_URL of the schema's owner: the service's own role gets its privileges)\n",
    );
  });
});
