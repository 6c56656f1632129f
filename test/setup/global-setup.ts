import 'reflect-metadata';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/database-options';
import { EmbeddedDatabase } from '../../src/database/embedded/embedded-database';
import { runMigrations } from '../../src/database/migrate';
import {
  assertTestDatabaseName,
  EMBEDDED_TEMPLATE_VAR,
  INHERIT_TEMPLATE_VAR,
  PG_TEMPLATE_VAR,
  RUN_ID_VAR,
  TEST_TMP_ROOT,
  testDatabaseServerUrl,
  withAdminClient,
  withDatabase,
} from './test-env';

/**
 * Migrates one template database per run; every test app then gets a fresh copy of it
 * (CREATE DATABASE … TEMPLATE on PostgreSQL, a copied data dir for the embedded database).
 */
export default async function globalSetup(): Promise<void> {
  const runId = `${Date.now().toString(36)}_${process.pid}`;
  process.env[RUN_ID_VAR] = runId;
  const serverUrl = testDatabaseServerUrl();
  // A child jest of a test: the parent's template, migrated already (and dropped by the parent).
  if (process.env[INHERIT_TEMPLATE_VAR] === '1' && process.env[serverUrl ? PG_TEMPLATE_VAR : EMBEDDED_TEMPLATE_VAR])
    return;

  if (serverUrl) {
    const template = `rhythmc_test_tpl_${runId}`;
    assertTestDatabaseName(template);
    await withAdminClient(serverUrl, (admin) => admin.query(`CREATE DATABASE "${template}"`));
    const dataSource = await new DataSource(
      buildDataSourceOptions({ url: withDatabase(serverUrl, template), embedded: false }),
    ).initialize();
    try {
      await runMigrations(dataSource, false, () => undefined);
    } finally {
      await dataSource.destroy();
    }
    process.env[PG_TEMPLATE_VAR] = template;
    return;
  }

  const templateDir = join(TEST_TMP_ROOT, runId, 'template');
  rmSync(templateDir, { recursive: true, force: true });
  mkdirSync(templateDir, { recursive: true });
  const embedded = await EmbeddedDatabase.start(templateDir);
  try {
    const dataSource = await new DataSource(buildDataSourceOptions({ url: embedded.url, embedded: true })).initialize();
    try {
      await runMigrations(dataSource, true, () => undefined);
    } finally {
      await dataSource.destroy();
    }
  } finally {
    await embedded.stop();
  }
  process.env[EMBEDDED_TEMPLATE_VAR] = templateDir;
}
