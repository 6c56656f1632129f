import { accessSync, constants, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';

/** Shared between the global setup (parent process) and the test workers through the environment. */
export const RUN_ID_VAR = 'RHYTHMC_TEST_RUN_ID';
export const PG_TEMPLATE_VAR = 'RHYTHMC_TEST_PG_TEMPLATE';
export const EMBEDDED_TEMPLATE_VAR = 'RHYTHMC_TEST_EMBEDDED_TEMPLATE';
/**
 * Set by a test that runs a child jest (console-browser-missing): the child copies the parent
 * run's migrated template (PG_TEMPLATE_VAR or EMBEDDED_TEMPLATE_VAR, kept in its environment)
 * instead of migrating its own, and drops only its own databases. Saves a migration per child.
 */
export const INHERIT_TEMPLATE_VAR = 'RHYTHMC_TEST_INHERIT_TEMPLATE';

/**
 * Where a run keeps its template, the test apps' data dirs (an embedded database is a 40 MB copy
 * of the template) and its scratch files: RHYTHMC_TEST_TMP when set; else a folder in /dev/shm
 * when that is a memory file system with 4 GiB free (a copy there takes 0.08 s against 0.7 s on
 * this machine's disk, for every test app); else .test-tmp in the checkout. Chosen once, by the
 * first process of a run (jest's, for its global setup), and handed to the workers through the
 * environment, so all of them use one place.
 */
const TMP_VAR = 'RHYTHMC_TEST_TMP';
const SHM = '/dev/shm';
const SHM_FREE_BYTES = 4 * 1024 ** 3;

function chooseTmpRoot(): string {
  try {
    const fs = statfsSync(SHM);
    accessSync(SHM, constants.W_OK);
    if (fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= SHM_FREE_BYTES) return join(SHM, 'rhythmc-test');
  } catch {
    // no /dev/shm here
  }
  return join(__dirname, '..', '..', '.test-tmp');
}

/** statfs's f_type of tmpfs (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;

if (!process.env[TMP_VAR]?.trim()) process.env[TMP_VAR] = chooseTmpRoot();
export const TEST_TMP_ROOT = process.env[TMP_VAR];

/** A real PostgreSQL server when DATABASE_URL is set; its own database is only used to create test databases. */
export function testDatabaseServerUrl(): string | null {
  const url = process.env.DATABASE_URL?.trim();
  return url ? url : null;
}

/**
 * A PgBouncer in transaction mode in front of that server (`host:port`, .ci/run starts one): when
 * set, every test service connects through it (DATABASE_POOL_MODE=transaction, the migrations on
 * the direct URL), while the tests' own SQL stays direct.
 */
export const PGBOUNCER_VAR = 'RHYTHMC_TEST_PGBOUNCER';

export function testPgBouncer(): string | null {
  const address = process.env[PGBOUNCER_VAR]?.trim();
  return address ? address : null;
}

/** `url` with its host and port replaced by `address` (host:port), e.g. a pooler's. */
export function withAddress(url: string, address: string): string {
  const parsed = new URL(url);
  parsed.host = address;
  return parsed.toString();
}

export function testRedisUrl(): string | null {
  const url = process.env.REDIS_URL?.trim();
  return url ? url : null;
}

/** Replaces the database name of a postgres URL. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Refuses to touch a database whose name does not say it is a test database. */
export function assertTestDatabaseName(name: string): void {
  if (!/^rhythmc_test_[a-z0-9_]+$/.test(name)) {
    throw new Error(`Refusing to use database "${name}": test databases are named rhythmc_test_*`);
  }
}

/** Runs `fn` with a client on the PostgreSQL server of `serverUrl`, always closing it. */
export async function withAdminClient<T>(serverUrl: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
