import 'reflect-metadata';
import type { Type } from '@nestjs/common';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { RunningService, StartOptions, startService } from '../../src/app.factory';
import { EmbeddedDatabase } from '../../src/database/embedded/embedded-database';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { RankIndex } from '../../src/ranking/rank-index/rank-index';
import {
  assertTestDatabaseName,
  EMBEDDED_TEMPLATE_VAR,
  PG_TEMPLATE_VAR,
  RUN_ID_VAR,
  TEST_TMP_ROOT,
  testDatabaseServerUrl,
  testPgBouncer,
  testRedisUrl,
  withAdminClient,
  withAddress,
  withDatabase,
} from '../setup/test-env';
import { HttpClient } from './http';
import { sleep } from './wait';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

let counter = 0;

export interface TestDatabase {
  /** DATABASE_URL (PostgreSQL) or DATA_DIR (embedded, DATABASE_URL empty). */
  env: Record<string, string>;
  drop(): Promise<void>;
}

/** A fresh database for one test app: a clone of the migrated template. */
export async function freshDatabase(): Promise<TestDatabase> {
  const runId = process.env[RUN_ID_VAR] as string;
  // The counter restarts with every test file (Jest loads this module again for each), and a
  // worker runs many files: the random part keeps a database left behind by a failed file from
  // colliding with the next file's first one.
  const name = `${runId}_${process.pid}_${++counter}_${randomBytes(3).toString('hex')}`.toLowerCase();
  const serverUrl = testDatabaseServerUrl();
  if (serverUrl) {
    const database = `rhythmc_test_${name}`;
    assertTestDatabaseName(database);
    await withAdminClient(serverUrl, async (admin) => {
      // Two clones of one template at the same instant can collide; retry briefly.
      for (let attempt = 0; ; attempt++) {
        try {
          await admin.query(`CREATE DATABASE "${database}" TEMPLATE "${process.env[PG_TEMPLATE_VAR]}"`);
          return;
        } catch (error) {
          if (attempt >= 20 || !/being accessed by other users/.test(String(error))) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
        }
      }
    });
    // A data dir of its own too: the in-process rank index keeps its snapshot there.
    const snapshotDir = join(TEST_TMP_ROOT, runId, name);
    return {
      env: { DATABASE_URL: withDatabase(serverUrl, database), DATA_DIR: snapshotDir },
      drop: async () => {
        await withAdminClient(serverUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
        rmSync(snapshotDir, { recursive: true, force: true });
      },
    };
  }
  const dataDir = join(TEST_TMP_ROOT, runId, name);
  cpSync(process.env[EMBEDDED_TEMPLATE_VAR] as string, dataDir, { recursive: true });
  return {
    env: { DATABASE_URL: '', DATA_DIR: dataDir },
    // As DROP DATABASE: a run's closed apps do not pile up their 40 MB data dirs until the teardown.
    drop: () => Promise.resolve(rmSync(dataDir, { recursive: true, force: true })),
  };
}

export interface TestApp {
  readonly baseUrl: string;
  /** The environment the app was started with (a second instance can share its database and Redis prefix). */
  readonly env: Readonly<Record<string, string>>;
  readonly config: AppConfig;
  readonly http: HttpClient;
  readonly admin: HttpClient;
  /** Runs SQL on the app's database, for asserting stored state. */
  sql<T extends Record<string, unknown> = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** The URL the service connects with (the embedded database's carries its per-start secret). */
  databaseUrl(): string;
  /** A provider of the running app (for service methods no route exposes yet), by class or injection token. */
  get<T>(type: Type<T> | symbol): T;
  /** Stops the service and starts it again on the same database (same port). */
  restart(whileStopped?: () => Promise<void> | void): Promise<void>;
  close(): Promise<void>;
}

/** What the factories need: the two HTTP clients of a service (a TestApp, or a service in a child process). */
export type TestClients = Pick<TestApp, 'http' | 'admin'>;

export interface TestAppOptions {
  /** Environment overrides (decisions.md §1 variables). */
  env?: Record<string, string>;
  /** Rewrites the DATABASE_URL the service connects to (e.g. through a TCP proxy); `sql()` stays direct. */
  databaseUrl?: (url: string) => string;
  /** Use Redis (REDIS_URL of the test environment) when it is set. Default true. */
  redis?: boolean;
  /** Start a second instance on the same database and Redis prefix (PostgreSQL only; Redis: REDIS_URL unless env names one). */
  shareWith?: TestApp;
  /** Where the app writes its log lines (see LogCapture); LOG_LEVEL still applies. */
  logDestination?: StartOptions['logDestination'];
  /**
   * A database as a new deployment's migrations would create it: the template's copy with an id
   * of its own in `database_identity` (the one thing the migrations write at random). Without
   * it, every test database is a copy of one template, as a restored backup is.
   */
  recreated?: boolean;
  /** Wait for a Redis rank index built at the start (untilRankIndexBuilt). Default true. */
  rankIndexBuilt?: boolean;
}

/** Gives a fresh test database the random identity its migration would have written. */
async function giveOwnIdentity(env: Record<string, string>): Promise<void> {
  const embedded = env.DATABASE_URL ? null : await EmbeddedDatabase.start(env.DATA_DIR);
  const client = new Client({ connectionString: embedded?.url ?? env.DATABASE_URL });
  try {
    await client.connect();
    await client.query('UPDATE database_identity SET id = gen_random_uuid()');
  } finally {
    await client.end();
    await embedded?.stop();
  }
}

/**
 * With RHYTHMC_TEST_PGBOUNCER (PostgreSQL only): the service's DATABASE_URL goes through that
 * PgBouncer in transaction mode, the migrations directly, unless the test set them itself.
 */
export function throughPgBouncer(env: Record<string, string>): Record<string, string> {
  const pgBouncer = testPgBouncer();
  if (!pgBouncer || !env.DATABASE_URL) return env;
  return {
    MIGRATION_DATABASE_URL: env.DATABASE_URL,
    DATABASE_POOL_MODE: 'transaction',
    ...env,
    DATABASE_URL: withAddress(env.DATABASE_URL, pgBouncer),
  };
}

/** Two instances need a real PostgreSQL and Redis (the embedded database is single-process). */
export const multiInstanceAvailable = (): boolean => testDatabaseServerUrl() !== null && testRedisUrl() !== null;

/** The environment of a test service, without its database (see freshDatabase). */
export function testServiceEnv(redisUrl: string | null = testRedisUrl()): Record<string, string> {
  return {
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ADMIN_TOKEN,
    THROTTLE_LOGIN_LIMIT: '100000',
    // Tests that send wrong admin tokens on purpose (hostile input) must not lock the next ones out.
    THROTTLE_ADMIN_AUTH_MAX_FAILURES: '1000000',
    REDIS_URL: redisUrl ?? '',
    REDIS_KEY_PREFIX: `rhythmc-test:${randomBytes(6).toString('hex')}:`,
    IDENTITY_PROVIDER_URL: 'http://127.0.0.1:9',
    RESOURCE_DIR: join(TEST_TMP_ROOT, 'no-resources'),
  };
}

/**
 * A Redis rank index missing at the start is built while the service listens (decisions.md "A
 * Redis index bound to its database"): on a test's small database that takes milliseconds, so the
 * tests start from a built index, as a deployment does once it has run. Up to 10 s; an index that
 * cannot be built (Redis down, another deployment's) is the test's to wait for or not.
 */
async function untilRankIndexBuilt(service: RunningService): Promise<void> {
  const index = service.app.get(RankIndex as unknown as Type<RankIndex>, { strict: false });
  if (index.kind !== 'redis') return;
  for (let waited = 0; waited < 10_000 && !(await index.stats()).ready; waited += 20) await sleep(20);
}

/** Starts the real service on a fresh database and a free port. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const shared = options.shareWith;
  if (shared && (testDatabaseServerUrl() === null || !(options.env?.REDIS_URL ?? testRedisUrl())))
    throw new Error('shareWith needs DATABASE_URL and a Redis (REDIS_URL, or one in env)');
  const database = shared
    ? {
        env: { DATABASE_URL: shared.env.DATABASE_URL, REDIS_KEY_PREFIX: shared.env.REDIS_KEY_PREFIX },
        drop: () => Promise.resolve(),
      }
    : await freshDatabase();
  if (options.recreated && !shared) await giveOwnIdentity(database.env);
  const redisUrl = options.redis === false ? null : testRedisUrl();
  const env: Record<string, string> = { ...testServiceEnv(redisUrl), ...database.env, ...options.env };
  const serviceEnv = options.databaseUrl
    ? env.DATABASE_URL
      ? { ...env, DATABASE_URL: options.databaseUrl(env.DATABASE_URL) }
      : env
    : throughPgBouncer(env);
  let config = loadConfig(serviceEnv);
  const startOptions: StartOptions = { logDestination: options.logDestination };
  let service: RunningService = await startService(config, startOptions);
  if (options.rankIndexBuilt !== false) await untilRankIndexBuilt(service);
  // Keep the port across restarts so URLs handed out stay valid.
  config = { ...config, port: service.port };
  const baseUrl = `${config.tlsCertFile ? 'https' : 'http'}://127.0.0.1:${service.port}`;
  let client: Client | null = null;

  const sqlClient = async (): Promise<Client> => {
    if (!client) {
      const opened = new Client({ connectionString: env.DATABASE_URL || service.databaseUrl });
      // A lost connection (the database stopped or restarted): the next call opens a new one.
      const drop = () => {
        if (client === opened) client = null;
      };
      opened.on('error', drop);
      opened.on('end', drop);
      client = opened;
      try {
        await opened.connect();
      } catch (error) {
        drop();
        throw error;
      }
    }
    return client;
  };
  const closeSql = async () => {
    const current = client;
    client = null;
    await current?.end().catch(() => undefined);
  };

  return {
    baseUrl,
    env,
    config,
    http: new HttpClient(baseUrl),
    admin: new HttpClient(baseUrl, ADMIN_TOKEN),
    async sql<T extends Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
      const result = await (await sqlClient()).query<T>(text, params);
      return result.rows;
    },
    databaseUrl: () => service.databaseUrl,
    get<T>(type: Type<T> | symbol): T {
      return service.app.get<T>(type);
    },
    async restart(whileStopped) {
      await closeSql();
      await service.close();
      await whileStopped?.();
      service = await startService(config, startOptions);
      if (options.rankIndexBuilt !== false) await untilRankIndexBuilt(service);
    },
    async close() {
      await closeSql();
      await service.close();
      await database.drop();
    },
  };
}
