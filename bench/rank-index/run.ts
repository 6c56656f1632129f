/**
 * The in-process rank index at start-up (docs/benchmarks.md "Rank index at start-up"): the built
 * service without REDIS_URL on a large PostgreSQL database (default rhythmc_bench_rankidx, a copy
 * of the network-day data: 1M ranked players, ~9M bests on 2,000 charts). Three starts:
 *   1. no snapshot: the full streamed load from the tables (then the snapshot is written);
 *   2. after a clean stop: the snapshot, nothing to catch up;
 *   3. after RANKIDX_CHANGED rating rows were written while it was down: the snapshot plus catch-up.
 * For each: ready time from process start (spawn → /health/ready, which answers once the index is
 * loaded), whether the index answers (rhythmc_rank_index_ready), VmRSS and VmHWM after ready, the
 * load log line (keys, bytes per key), what the memory is made of once settled, and the load average.
 *
 *   npm run build && npm run bench:rank-index
 *   BENCH_DATABASE_URL=postgres://…/rhythmc_bench_rankidx RANKIDX_CHANGED=10000 npm run bench:rank-index
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  assertBenchDatabase,
  BENCH_ADMIN_TOKEN,
  benchDatabaseUrl,
  databaseName,
  intFromEnv,
  loadAverage,
  OUT_DIR,
  runMain,
} from '../harness/env';
import { withClient } from '../harness/database';
import { scrapeMetrics } from '../harness/event-loop';
import { formatMemory, MemoryBreakdown, memoryBreakdown } from '../harness/memory';
import { Child, memoryOf, mib, startServiceProcess, stopAllChildren, stopChild } from '../harness/process';

const DATABASE_URL = benchDatabaseUrl('rhythmc_bench_rankidx');
const CHANGED = intFromEnv('RANKIDX_CHANGED', 10_000);
const DATA_DIR = join(OUT_DIR, 'rank-index-data');
const SNAPSHOT = join(DATA_DIR, 'rank-index.snapshot');
const LOG = 'rank-index.log';
const SETTLE_MS = intFromEnv('RANKIDX_SETTLE_MS', 20_000);

interface StartFigures {
  start: string;
  readyMs: number;
  indexReady: boolean;
  rssMiB: number;
  peakRssMiB: number;
  /** VmRSS SETTLE_MS after ready (V8's memory reducer runs a few seconds after a burst of allocation). */
  settledRssMiB: number;
  /** What the resident memory is made of SETTLE_MS after ready (bench/harness/memory.ts). */
  settled?: MemoryBreakdown;
  load: string;
  loadAverage: number;
}

async function metric(child: Child, name: string): Promise<string> {
  const text = await (await fetch(`${child.url}/metrics`)).text();
  return (
    text
      .split('\n')
      .find((line) => line.startsWith(name))
      ?.split(' ')
      .pop() ?? ''
  );
}

/** The index's last "Rank index loaded …" line in the service log. */
function lastLoadLine(): string {
  const lines = readFileSync(join(OUT_DIR, LOG), 'utf8').split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const match = /Rank index loaded[^"]*/.exec(lines[i]);
    if (match) return match[0];
  }
  return '';
}

async function start(label: string): Promise<{ child: Child; figures: StartFigures }> {
  const child = await startServiceProcess({
    databaseUrl: DATABASE_URL,
    adminToken: BENCH_ADMIN_TOKEN,
    source: 'dist',
    log: LOG,
    env: { DATA_DIR, LOG_LEVEL: 'info' },
  });
  const memory = memoryOf(child.pid);
  const figures: StartFigures = {
    start: label,
    readyMs: child.startedMs,
    indexReady: (await metric(child, 'rhythmc_rank_index_ready{mode="memory"}')) === '1',
    rssMiB: mib(memory.rss),
    peakRssMiB: mib(memory.peakRss),
    settledRssMiB: NaN,
    load: lastLoadLine(),
    loadAverage: loadAverage(),
  };
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  figures.settledRssMiB = mib(memoryOf(child.pid).rss);
  figures.settled = memoryBreakdown(child.pid, await scrapeMetrics(child.url));
  process.stdout.write(`${JSON.stringify(figures)}\n${formatMemory([figures.settled])}\n`);
  return { child, figures };
}

/** Waits until the snapshot file appears (written in the background after a full load). */
async function snapshotWritten(since: number): Promise<void> {
  for (const deadline = Date.now() + 300_000; Date.now() < deadline;) {
    try {
      if (statSync(SNAPSHOT).mtimeMs >= since) return;
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('the snapshot was not written within 5 minutes');
}

async function main(): Promise<void> {
  assertBenchDatabase(DATABASE_URL);
  if (databaseName(DATABASE_URL) === 'rhythmc_bench_network')
    throw new Error('rhythmc_bench_network is the shared generated data: run on a copy (CREATE DATABASE … TEMPLATE)');
  mkdirSync(DATA_DIR, { recursive: true });
  rmSync(SNAPSHOT, { force: true });
  rmSync(join(OUT_DIR, LOG), { force: true });
  const results: StartFigures[] = [];

  const began = Date.now();
  const first = await start('no snapshot (full streamed load)');
  results.push(first.figures);
  await snapshotWritten(began);
  const afterSnapshot = memoryOf(first.child.pid);
  process.stdout.write(
    `after the snapshot was written: RSS ${mib(afterSnapshot.rss)} MiB, HWM ${mib(afterSnapshot.peakRss)} MiB; snapshot ${mib(statSync(SNAPSHOT).size)} MiB\n`,
  );
  await stopChild(first.child, 120_000);

  const second = await start('snapshot, nothing changed');
  results.push(second.figures);
  await stopChild(second.child, 120_000);

  // Rating rows written while the service is down (the trigger moves their change_seq).
  await withClient(DATABASE_URL, (client) =>
    client.query(
      `UPDATE player_rating SET updated_at = now() WHERE uid IN (SELECT uid FROM player_rating ORDER BY uid DESC LIMIT $1)`,
      [CHANGED],
    ),
  );
  const third = await start(`snapshot + ${CHANGED} players changed while down`);
  results.push(third.figures);
  await stopChild(third.child, 120_000);

  writeFileSync(
    join(OUT_DIR, 'rank-index.json'),
    JSON.stringify({ database: databaseName(DATABASE_URL), snapshotBytes: statSync(SNAPSHOT).size, results }, null, 2),
  );
  process.stdout.write(
    `\n| start | ready (s) | index answers | VmRSS at ready (MiB) | VmHWM (MiB) | VmRSS ${SETTLE_MS / 1000} s later (MiB) | load avg |\n|---|---|---|---|---|---|---|\n`,
  );
  for (const r of results)
    process.stdout.write(
      `| ${r.start} | ${(r.readyMs / 1000).toFixed(1)} | ${r.indexReady ? 'yes' : 'no'} | ${r.rssMiB} | ${r.peakRssMiB} | ${r.settledRssMiB} | ${r.loadAverage} |\n`,
    );
  for (const r of results) process.stdout.write(`${r.start}: ${r.load}\n`);
}

runMain(main, stopAllChildren);
