/**
 * Scoped board benchmark (issue #44 item 3): the service's statements for a set of 100 uids
 * (SITE_AMONG_SQL, TRACK_AMONG_SQL) against the global top 10 (TOP_SITE_SQL) in the same run, on the
 * database bench/history/run.ts generated (PLAYERS players, 1 % banned, each with 10 plays).
 *
 *   npm run bench:history:scoped          # after npm run bench:history
 */
import { Client } from 'pg';
import { withClient } from '../harness/database';
import { benchDatabaseUrl, fmt, intFromEnv, loadAverage, runMain } from '../harness/env';
import { SITE_AMONG_SQL, TOP_SITE_SQL, TRACK_AMONG_SQL } from '../../src/ranking/leaderboard.repository';

const URL = benchDatabaseUrl('rhythmc_bench_history');
const READS = intFromEnv('READS', 2_000);

async function time(client: Client, name: string, text: string, values: () => unknown[]): Promise<string> {
  const latencies: number[] = [];
  for (let i = 0; i < READS; i++) {
    const t = performance.now();
    await client.query({ name, text, values: values() });
    latencies.push(performance.now() - t);
  }
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  return `${name}: p50 ${fmt(q(0.5), 2)} ms, p99 ${fmt(q(0.99), 2)} ms — load ${loadAverage().toFixed(2)}`;
}

runMain(async () => {
  await withClient(URL, async (client) => {
    const players = Number((await client.query<{ n: string }>('SELECT max(uid) AS n FROM player')).rows[0].n);
    const set = () => Array.from({ length: 100 }, () => String(1 + Math.floor(Math.random() * players)));
    const chart = async () =>
      (
        await client.query<{ l: number }>(
          'SELECT level_id AS l FROM player_chart_best GROUP BY 1 ORDER BY count(*) DESC LIMIT 1',
        )
      ).rows[0].l;
    const level = await chart();
    console.log(`${fmt(players)} players, ${fmt(READS)} reads each, one connection, SQL only`);
    console.log(await time(client, 'top_site_10', TOP_SITE_SQL, () => [10]));
    console.log(await time(client, 'site_among_100', SITE_AMONG_SQL, () => [set()]));
    console.log(await time(client, 'track_among_100', TRACK_AMONG_SQL, () => [level, set()]));
  });
});
