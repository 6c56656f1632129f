import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { startService, StartStoppedError } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';
import { EmbeddedDatabase } from '../../src/database/embedded/embedded-database';
import { HttpClient } from '../support/http';
import { LogCapture } from '../support/log-capture';
import { reportFaultTiming } from '../support/fault-timing';
import { spawnServiceChild, startServiceChild, StartingServiceChild } from '../support/service-child';
import { ADMIN_TOKEN, freshDatabase, TestDatabase, testServiceEnv } from '../support/test-app';
import {
  assertTestDatabaseName,
  RUN_ID_VAR,
  TEST_TMP_ROOT,
  testDatabaseServerUrl,
  withAdminClient,
  withDatabase,
} from '../setup/test-env';

/**
 * SIGTERM at several points of a real service process's start-up (docs/decisions.md "Signals at
 * any time"): each stop is a clean one (exit 0, the embedded database shut down and its lock
 * released), and the next start on the same database serves with its data. Each point is found
 * from the process itself (its IPC message that it catches signals, its log lines, a lock it waits
 * for), never by waiting a while.
 */
const onPostgres = testDatabaseServerUrl() !== null;
const MIGRATION_LOCK_KEY = 727_001;
const migrationFiles = readdirSync(join(__dirname, '..', '..', 'migrations')).filter((file) => /\.ts$/.test(file));

const serviceEnv = (database: TestDatabase) => ({ ...testServiceEnv(), ...database.env, LOG_LEVEL: 'info' });

/** Sends SIGTERM and waits for the exit; returns the exit code and how long it took. */
async function terminate(child: StartingServiceChild, what: string): Promise<number | null> {
  const sent = Date.now();
  child.process.kill('SIGTERM');
  const code = await child.exited;
  reportFaultTiming(`SIGTERM ${what}: exit ${code}`, Date.now() - sent);
  return code;
}

/** Starts the service on the database, checks that it serves `serverName` (when given), and stops it (exit 0). */
async function startAndCheck(database: TestDatabase, serverName?: string): Promise<void> {
  const child = await startServiceChild(serviceEnv(database));
  try {
    const admin = new HttpClient(`http://127.0.0.1:${child.port}`, ADMIN_TOKEN);
    expect((await admin.get('/health/ready')).status).toBe(200);
    if (serverName !== undefined) {
      const servers = await admin.get<{ items: Array<{ serverName: string }> }>('/admin/servers?limit=100');
      expect(servers.status).toBe(200);
      expect(servers.body.items.map((server) => server.serverName)).toContain(serverName);
    }
  } finally {
    child.process.kill('SIGTERM');
    expect(await child.exited).toBe(0);
  }
}

/** A running service writes a game server, then stops: the data the next starts must keep. */
async function seed(database: TestDatabase): Promise<string> {
  const child = await startServiceChild(serviceEnv(database));
  const admin = new HttpClient(`http://127.0.0.1:${child.port}`, ADMIN_TOKEN);
  const name = `signals-${randomBytes(3).toString('hex')}`;
  expect((await admin.post('/admin/servers', { name, country: 'DE' })).status).toBe(201);
  child.process.kill('SIGTERM');
  expect(await child.exited).toBe(0);
  return name;
}

/** A database no migration has run on: an empty PostgreSQL database, or an empty embedded data dir. */
async function emptyDatabase(): Promise<TestDatabase> {
  const name = `${process.env[RUN_ID_VAR] as string}_signals_${randomBytes(4).toString('hex')}`.toLowerCase();
  const dataDir = join(TEST_TMP_ROOT, process.env[RUN_ID_VAR] as string, name);
  const serverUrl = testDatabaseServerUrl();
  if (serverUrl === null) return { env: { DATABASE_URL: '', DATA_DIR: dataDir }, drop: () => Promise.resolve() };
  const database = `rhythmc_test_${name}`;
  assertTestDatabaseName(database);
  await withAdminClient(serverUrl, (admin) => admin.query(`CREATE DATABASE "${database}"`));
  return {
    env: { DATABASE_URL: withDatabase(serverUrl, database), DATA_DIR: dataDir },
    drop: () =>
      withAdminClient(serverUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}

const lockFile = (database: TestDatabase) => join(database.env.DATA_DIR, 'pglite.lock');

describe('SIGTERM during start-up: a clean stop (exit 0) and a next start with the data', () => {
  it('while the modules load (as soon as the process catches signals)', async () => {
    const database = await freshDatabase();
    try {
      const name = await seed(database);
      const child = spawnServiceChild(serviceEnv(database));
      await child.catchesSignals();
      expect(await terminate(child, 'while the modules load')).toBe(0);
      // Logged to stderr before the process has its logger, to the log after.
      expect(child.stdout() + child.stderr()).toMatch(/SIGTERM received during start-up/);
      if (!onPostgres) expect(existsSync(lockFile(database))).toBe(false);
      await startAndCheck(database, name);
    } finally {
      await database.drop();
    }
  }, 180_000);

  (onPostgres ? it.skip : it)(
    'while the embedded database starts (embedded pass only)',
    async () => {
      const database = await freshDatabase();
      try {
        const name = await seed(database);
        const child = spawnServiceChild(serviceEnv(database));
        await child.line(/Starting the embedded database/);
        expect(await terminate(child, 'while the embedded database starts')).toBe(0);
        expect(child.stdout()).toMatch(/SIGTERM received during start-up/);
        expect(child.stdout()).toMatch(
          /Stopped once the embedded database had started: everything that had started is closed/,
        );
        // The worker shut PGlite down and the lock is gone: the next start takes the data dir at once.
        expect(existsSync(lockFile(database))).toBe(false);
        await startAndCheck(database, name);
      } finally {
        await database.drop();
      }
    },
    180_000,
  );

  it('while the migrations of a fresh database run', async () => {
    const database = await emptyDatabase();
    try {
      const child = spawnServiceChild(serviceEnv(database));
      await child.line(/Applying pending migrations/);
      expect(await terminate(child, 'while the migrations of a fresh database run')).toBe(0);
      expect(child.stdout()).toMatch(/everything that had started is closed/);
      if (!onPostgres) expect(existsSync(lockFile(database))).toBe(false);
      await startAndCheck(database);
    } finally {
      await database.drop();
    }
  }, 300_000);

  it('in this process: a stop during migrations closes the database pool, and the embedded database with its lock, before the start rejects', async () => {
    const database = await emptyDatabase();
    try {
      const stop = new AbortController();
      const logs = new LogCapture();
      const destination = {
        write: (chunk: string) => {
          logs.write(chunk);
          if (chunk.includes('Applying pending migrations')) stop.abort('SIGTERM');
        },
      };
      const config = loadConfig({ ...process.env, ...serviceEnv(database) });
      await expect(startService(config, { logDestination: destination, stopSignal: stop.signal })).rejects.toThrow(
        StartStoppedError,
      );
      expect(logs.lines.join('\n')).toMatch(/Stopped once connected and migrated, before listening/);
      // This process still runs: what the start opened is closed, not merely dropped by an exit.
      if (onPostgres) {
        const client = new Client({ connectionString: database.env.DATABASE_URL });
        await client.connect();
        try {
          const { rows } = await client.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
          );
          expect(rows[0].n).toBe(0);
        } finally {
          await client.end();
        }
      } else {
        expect(existsSync(lockFile(database))).toBe(false);
        // Released in this process too (a second open here would be refused), and consistent.
        const embedded = await EmbeddedDatabase.start(database.env.DATA_DIR);
        const client = new Client({ connectionString: embedded.url });
        try {
          await client.connect();
          const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM migrations');
          expect(rows[0].n).toBe(migrationFiles.length);
        } finally {
          await client.end();
          await embedded.stop();
        }
      }
    } finally {
      await database.drop();
    }
  }, 300_000);

  (onPostgres ? describe : describe.skip)('waiting for the migration lock (PostgreSQL pass only)', () => {
    /** Holds the migration lock as another instance migrating would; resolves once the child waits for it. */
    async function holdMigrationLock(database: TestDatabase) {
      const holder = new Client({ connectionString: database.env.DATABASE_URL });
      await holder.connect();
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      const child = spawnServiceChild(serviceEnv(database));
      // The child's session is queued behind ours for the lock.
      for (;;) {
        const { rows } = await holder.query<{ waiting: number }>(
          `SELECT count(*)::int AS waiting FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`,
          [MIGRATION_LOCK_KEY],
        );
        if (rows[0].waiting > 0) break;
        if (child.process.exitCode !== null) throw new Error(`the service exited: ${child.stderr()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return { holder, child };
    }

    it('a signal there lets the migrations finish, then closes what started and exits 0', async () => {
      const database = await emptyDatabase();
      try {
        const { holder, child } = await holdMigrationLock(database);
        try {
          child.process.kill('SIGTERM');
          // The signal is taken during start-up (logged at once), while the start still waits.
          await child.line(/SIGTERM received during start-up/);
        } finally {
          await holder.end();
        }
        expect(await child.exited).toBe(0);
        const out = child.stdout();
        expect(out.indexOf('SIGTERM received during start-up')).toBeLessThan(
          out.indexOf('Applying pending migrations'),
        );
        expect(out).toMatch(
          /Stopped once connected and migrated, before listening: everything that had started is closed/,
        );
        // Every migration was applied: the step in progress was not cut.
        const client = new Client({ connectionString: database.env.DATABASE_URL });
        await client.connect();
        try {
          const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM migrations');
          expect(rows[0].n).toBe(migrationFiles.length);
        } finally {
          await client.end();
        }
        await startAndCheck(database);
      } finally {
        await database.drop();
      }
    }, 300_000);

    it('a second signal exits at once (143) and the next start migrates from where the database was', async () => {
      const database = await emptyDatabase();
      try {
        const { holder, child } = await holdMigrationLock(database);
        try {
          child.process.kill('SIGTERM');
          await child.line(/SIGTERM received during start-up/);
          expect(await terminate(child, 'twice while waiting for the migration lock')).toBe(143);
        } finally {
          await holder.end();
        }
        expect(child.stdout()).toMatch(/SIGTERM received again, exiting without waiting/);
        await startAndCheck(database);
      } finally {
        await database.drop();
      }
    }, 300_000);
  });
});
