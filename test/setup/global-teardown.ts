import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { assertTestDatabaseName, RUN_ID_VAR, TEST_TMP_ROOT, testDatabaseServerUrl, withAdminClient } from './test-env';

/** Drops every database and data dir of this run, the template included. */
export default async function globalTeardown(): Promise<void> {
  const runId = process.env[RUN_ID_VAR];
  if (!runId) return;
  const serverUrl = testDatabaseServerUrl();
  if (serverUrl) {
    await withAdminClient(serverUrl, async (admin) => {
      const { rows } = await admin.query<{ datname: string }>(
        `SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname = $2`,
        [`rhythmc_test_${runId}_%`, `rhythmc_test_tpl_${runId}`],
      );
      for (const { datname } of rows) {
        assertTestDatabaseName(datname);
        await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
      }
    });
  }
  rmSync(join(TEST_TMP_ROOT, runId), { recursive: true, force: true });
}
