/**
 * What an online backup of the embedded database costs (docs/benchmarks.md "Online backup of the
 * embedded database"): an embedded database grown with ROWS rows of filler (an int and two md5
 * texts, so the data compresses like hashes and ids do), then EmbeddedDatabase.backup() while a
 * client runs `SELECT 1` back to back: how long the backup took, its size, the longest wait of
 * a statement during it (statements wait while PGlite reads its files), the process's memory, and
 * how long the restore of the file into a new data dir took.
 *
 *   npm run bench:backup                  # ROWS=2000000 (a data dir of about 350 MB)
 *   ROWS=200000 npm run bench:backup
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { EmbeddedDatabase } from '../../src/database/embedded/embedded-database';
import { restoreEmbeddedBackup } from '../../src/database/embedded/embedded-restore';
import { fmt, intFromEnv, loadAverage, runMain } from '../harness/env';

const ROWS = intFromEnv('ROWS', 2_000_000);
const MiB = 2 ** 20;
const duMiB = (dir: string) => Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]) / 1024;

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'rhythmc-bench-backup-'));
  const database = await EmbeddedDatabase.start(join(root, 'data'));
  const client = new Client({ connectionString: database.url });
  await client.connect();
  try {
    let started = Date.now();
    await client.query('CREATE TABLE filler (id int PRIMARY KEY, a text NOT NULL, b text NOT NULL)');
    for (let from = 1; from <= ROWS; from += 200_000)
      await client.query(
        `INSERT INTO filler SELECT g, md5(g::text), md5((g * 7)::text) FROM generate_series($1::int, $2::int) g`,
        [from, Math.min(from + 199_999, ROWS)],
      );
    await client.query('CHECKPOINT');
    const dataMiB = duMiB(join(root, 'data'));
    process.stdout.write(
      `filled ${fmt(ROWS)} rows in ${((Date.now() - started) / 1000).toFixed(1)} s: ${fmt(dataMiB)} MiB\n`,
    );

    const waits: number[] = [];
    let probing = true;
    const probe = (async () => {
      while (probing) {
        const at = performance.now();
        await client.query('SELECT 1');
        waits.push(performance.now() - at);
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const rssBefore = process.memoryUsage().rss;
    const load = loadAverage();
    started = performance.now();
    const backup = await database.backup();
    const backupMs = performance.now() - started;
    const rssAfter = process.memoryUsage().rss;
    await new Promise((resolve) => setTimeout(resolve, 500));
    probing = false;
    await probe;
    const sorted = [...waits].sort((a, b) => a - b);

    await client.end();
    await database.stop();
    started = performance.now();
    const restored = await restoreEmbeddedBackup(backup, join(root, 'restored'));
    const restoreMs = performance.now() - started;
    process.stdout.write(
      `${JSON.stringify(
        {
          rows: ROWS,
          dataDirMiB: Math.round(dataMiB),
          backupMiB: Number((backup.length / MiB).toFixed(1)),
          backupMs: Math.round(backupMs),
          longestStatementWaitMs: Math.round(sorted[sorted.length - 1]),
          statementsDuringRun: waits.length,
          statementP50Ms: Number(sorted[Math.floor(sorted.length / 2)].toFixed(2)),
          rssBeforeMiB: Math.round(rssBefore / MiB),
          rssAfterMiB: Math.round(rssAfter / MiB),
          restoreMs: Math.round(restoreMs),
          restoredTables: restored.tables,
          loadAverage: load,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await client.end().catch(() => undefined);
    await database.stop().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  }
}

runMain(main);
