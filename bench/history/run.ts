/**
 * Rating history benchmark (issue #44): the daily snapshot and the 90-day read, with the service's
 * own statements (src/upload/history/rating-history.repository.ts), on PostgreSQL.
 *
 * Data: PLAYERS players (default 200,000; 1 % banned), 10 plays each, ratings derived from them,
 * every play received "today" (so every player is active in the measured day). Then:
 *   1. the snapshot of that day (every player active), in its transaction under the advisory lock, as the service runs it;
 *   2. the snapshot of a day where only every tenth player played (the plays of those moved to it): the sparse layout's size;
 *   3. 88 more dense days copied from day 1 (the same rows, a day apart): 90 days of history;
 *   4. READS histories of random players (a named prepared statement, one connection): p50 / p99.
 * Sizes: pg_total_relation_size (heap + PK) per entry, and pg_column_size of the rows.
 *
 *   npm run bench:history            # PLAYERS=1000000 for the size (generation takes minutes)
 */
import { Client } from 'pg';
import { recreateDatabase, withClient } from '../harness/database';
import { benchDatabaseUrl, fmt, intFromEnv, loadAverage, runMain, secondsSince } from '../harness/env';
import { analyze, deriveRatings, loadBans, loadCharts, loadPlayers, loadPlays } from '../harness/generate';
import { HISTORY_SQL, SNAPSHOT_LOCK_KEY, SNAPSHOT_SQL } from '../../src/upload/history/rating-history.repository';

const URL = benchDatabaseUrl('rhythmc_bench_history');
const PLAYERS = intFromEnv('PLAYERS', 200_000);
const READS = intFromEnv('READS', 2_000);
const DAY_MS = 86_400_000;

const load = () => `load ${loadAverage().toFixed(2)}`;

async function snapshot(client: Client, day: number, start: Date, end: Date): Promise<{ players: number; ms: number }> {
  const started = performance.now();
  await client.query('BEGIN');
  await client.query('SELECT pg_advisory_xact_lock($1)', [SNAPSHOT_LOCK_KEY]);
  const { rows } = await client.query<{ players: number }>(SNAPSHOT_SQL, [day, start, end]);
  await client.query('COMMIT');
  return { players: rows[0].players, ms: performance.now() - started };
}

async function sizeOf(client: Client, where: string): Promise<{ rows: number; entries: number; columnBytes: number }> {
  const { rows } = await client.query<{ rows: number; entries: string; bytes: string }>(
    `SELECT count(*)::int AS rows, sum(cardinality(slots)) AS entries, sum(pg_column_size(h.*)) AS bytes FROM rating_history_day h WHERE ${where}`,
  );
  return { rows: rows[0].rows, entries: Number(rows[0].entries), columnBytes: Number(rows[0].bytes) };
}

const relationBytes = async (client: Client) =>
  Number((await client.query<{ b: string }>(`SELECT pg_total_relation_size('rating_history_day') AS b`)).rows[0].b);

runMain(async () => {
  const started = Date.now();
  await recreateDatabase(URL);
  await withClient(URL, async (client) => {
    await loadPlayers(client, PLAYERS);
    await loadCharts(client);
    await loadBans(client, PLAYERS, 100);
    await loadPlays(client, 1, PLAYERS);
    await deriveRatings(client, 1, PLAYERS);
    await analyze(client);
    console.log(`generated ${fmt(PLAYERS)} players, ${fmt(PLAYERS * 10)} plays: ${secondsSince(started)} s`);

    const today = Math.floor(Date.now() / DAY_MS);
    const dense = await snapshot(client, today, new Date(today * DAY_MS - DAY_MS), new Date(Date.now() + DAY_MS));
    console.log(
      `snapshot, every player active: ${fmt(dense.players)} players in ${fmt(dense.ms / 1000, 2)} s ` +
        `(${fmt(dense.players / (dense.ms / 1000))} players/s; 1M players at this rate: ${fmt((dense.ms / 1000) * (1_000_000 / dense.players), 1)} s) — ${load()}`,
    );
    await client.query('VACUUM ANALYZE rating_history_day');
    const denseSize = await sizeOf(client, `day = ${today}`);
    const denseRelation = await relationBytes(client);
    console.log(
      `size, dense day: ${fmt(denseSize.rows)} rows, ${fmt(denseSize.entries)} entries; pg_column_size ${fmt(denseSize.columnBytes / denseSize.entries, 1)} B/entry; ` +
        `pg_total_relation_size ${fmt(denseRelation / denseSize.entries, 1)} B/entry (heap + PK)`,
    );

    // A sparse day: every tenth player's plays moved to yesterday.
    const yesterday = today - 1;
    await client.query(`UPDATE play_record SET received_at = $1 WHERE uid % 10 = 0`, [
      new Date(yesterday * DAY_MS + 3_600_000),
    ]);
    await client.query('VACUUM ANALYZE play_record');
    const sparse = await snapshot(client, yesterday, new Date(yesterday * DAY_MS), new Date(today * DAY_MS));
    await client.query('VACUUM ANALYZE rating_history_day');
    const sparseSize = await sizeOf(client, `day = ${yesterday}`);
    const sparseRelation = (await relationBytes(client)) - denseRelation;
    console.log(
      `snapshot, one player in ten active: ${fmt(sparse.players)} players in ${fmt(sparse.ms / 1000, 2)} s — ${load()}; ` +
        `${fmt(sparseSize.rows)} rows, pg_column_size ${fmt(sparseSize.columnBytes / sparseSize.entries, 1)} B/entry, ` +
        `relation growth ${fmt(sparseRelation / sparseSize.entries, 1)} B/entry`,
    );

    // 88 more dense days: 90 in all.
    for (let k = 2; k < 90; k++)
      await client.query(
        `INSERT INTO rating_history_day SELECT bucket, day - $1::int, slots, atp_e4, site_rank, plays FROM rating_history_day WHERE day = $2`,
        [k, today],
      );
    await client.query('VACUUM ANALYZE rating_history_day');
    const all = await sizeOf(client, 'true');
    console.log(
      `90 days: ${fmt(all.rows)} rows, ${fmt(all.entries)} entries, pg_total_relation_size ${fmt((await relationBytes(client)) / all.entries, 1)} B/entry`,
    );

    const latencies: number[] = [];
    let days = 0;
    for (let i = 0; i < READS; i++) {
      const uid = 1 + Math.floor(Math.random() * PLAYERS);
      const t = performance.now();
      const result = await client.query({ name: 'history', text: HISTORY_SQL, values: [uid, today - 90, today] });
      latencies.push(performance.now() - t);
      days += result.rowCount ?? 0;
    }
    latencies.sort((a, b) => a - b);
    const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
    console.log(
      `history read (90 days, SQL, one connection): ${fmt(READS)} reads, ${fmt(days / READS, 1)} days each; ` +
        `p50 ${fmt(q(0.5), 2)} ms, p99 ${fmt(q(0.99), 2)} ms — ${load()}`,
    );
  });
});
