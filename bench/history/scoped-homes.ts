/**
 * Group and country board benchmark (issue #44 item 3, docs/decisions.md "Scoped boards: groups and
 * countries"): the service's statements (src/ranking/scoped-board.repository.ts) for the top 10 and
 * a window (k = 5) around a random player of the scope, against the global board's statements of
 * the same shape (TOP_SITE_SQL, SITE_WINDOW_SQL; TOP_TRACK_SQL, TRACK_WINDOW_SQL) in the same run.
 *
 * Data, generated in SQL (triggers off for the load, homes set directly): PLAYERS players (default
 * 1,000,000), each with a rating (ATP 0–40, 4 decimals) and a best on one chart (acc among 60
 * values: many ties), 1 % banned; 100 servers, homes spread evenly; 25 handover groups of 4 servers
 * (about 40,000 players each) and 10 countries of 10 servers (about 100,000 each).
 * A scoped window's rank is an index range count over the players ahead in the scope, so its cost
 * grows with them (a random player of a 100,000-player country has 50,000 ahead on average);
 * the global window's rank comes from the rank index (not timed here: its statement reads only
 * the neighbours).
 *
 *   npm run bench:history:scoped-homes          # PLAYERS=200000 for a quicker run; REUSE=1 to read again
 */
import { Client } from 'pg';
import { recreateDatabase, withClient } from '../harness/database';
import { benchDatabaseUrl, fmt, intFromEnv, loadAverage, runMain, secondsSince } from '../harness/env';
import {
  SITE_WINDOW_SQL,
  TOP_SITE_SQL,
  TOP_TRACK_SQL,
  TRACK_WINDOW_SQL,
} from '../../src/ranking/leaderboard.repository';
import {
  COUNTRY_SERVERS_SQL,
  SCOPED_SITE_WINDOW_SQL,
  SCOPED_TOP_SITE_SQL,
  SCOPED_TOP_TRACK_SQL,
  SCOPED_TRACK_WINDOW_SQL,
} from '../../src/ranking/scoped-board.repository';
import { groupServers, SessionHandoverSetting } from '../../src/server/server.types';

const URL = benchDatabaseUrl('rhythmc_bench_scopes_homes');
const PLAYERS = intFromEnv('PLAYERS', 1_000_000);
const READS = intFromEnv('READS', 1_000);
const SERVERS = 100;
const LEVEL = 1;

async function generate(client: Client): Promise<void> {
  await client.query(`SET session_replication_role = replica`); // no triggers (webhooks, home fill, FKs) for the load
  await client.query(
    `INSERT INTO game_server (id, name, country)
     SELECT i, 'bench-' || i, chr(65 + (i - 1) / 10) || 'X' FROM generate_series(1, ${SERVERS}) AS i`,
  );
  await client.query(`SELECT setval(pg_get_serial_sequence('game_server', 'id'), ${SERVERS})`);
  await client.query(
    `INSERT INTO player (uid, username, display_name, extra_options, home_server_id)
     SELECT i, 'p' || i, '', '{}'::jsonb, 1 + ((i::bigint * 7919) % ${SERVERS})::int FROM generate_series(1, $1::int) AS i`,
    [PLAYERS],
  );
  await client.query(
    `INSERT INTO player_rating (uid, atp, version, home_server_id)
     SELECT p.uid, round((random() * 40)::numeric, 4), 1, p.home_server_id FROM player p`,
  );
  await client.query(
    `INSERT INTO player_chart_best (uid, level_id, acc, first_time_ms, record_id, rating, version, home_server_id)
     SELECT p.uid, ${LEVEL}, 70 + floor(random() * 60) / 2, 1700000000000 + floor(random() * 1e9)::bigint, p.uid, 10, 1, p.home_server_id
       FROM player p`,
  );
  await client.query(`INSERT INTO player_ban (uid, reason) SELECT uid, 'bench' FROM player WHERE uid % 100 = 7`);
  const groups = Array.from({ length: SERVERS / 4 }, (_, g) => ({
    name: `g${g}`,
    serverIDs: [1, 2, 3, 4].map((i) => g * 4 + i),
  }));
  await client.query(
    `INSERT INTO service_setting (key, value, updated_at) VALUES ('session_handover', $1, now())
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    [JSON.stringify({ mode: 'groups', groups, modes: ['ONLINE', 'TOKEN', 'OFFLINE_REFRESH'] })],
  );
  await client.query(`SET session_replication_role = origin`);
  await client.query('VACUUM ANALYZE');
}

function summary(latencies: number[]): { p50: number; p99: number } {
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  return { p50: q(0.5), p99: q(0.99) };
}

async function time(client: Client, name: string, text: string, values: () => unknown[]) {
  for (let i = 0; i < 10; i++) await client.query({ name, text, values: values() }); // plan cached, as the service's
  const latencies: number[] = [];
  for (let i = 0; i < READS; i++) {
    const t = performance.now();
    await client.query({ name, text, values: values() });
    latencies.push(performance.now() - t);
  }
  const s = summary(latencies);
  console.log(`${name}: p50 ${fmt(s.p50, 2)} ms, p99 ${fmt(s.p99, 2)} ms — load ${loadAverage().toFixed(2)}`);
  return s;
}

runMain(async () => {
  const started = Date.now();
  const reuse = intFromEnv('REUSE', 0) === 1; // REUSE=1: read the database a previous run generated
  if (!reuse) await recreateDatabase(URL);
  await withClient(URL, async (client) => {
    if (!reuse) await generate(client);
    console.log(
      `generated ${fmt(PLAYERS)} players on ${SERVERS} servers: ${secondsSince(started)} s — load ${loadAverage().toFixed(2)}`,
    );
    const handover = (
      await client.query<{ value: SessionHandoverSetting }>(
        `SELECT value FROM service_setting WHERE key = 'session_handover'`,
      )
    ).rows[0];
    const group = handover ? groupServers(handover.value, 'g7') : [];
    const country = (await client.query<{ id: number }>(COUNTRY_SERVERS_SQL, ['CX'])).rows.map((r) => r.id);
    const members = async (servers: number[]) =>
      (
        await client.query<{ uid: string }>(
          `SELECT uid FROM player WHERE home_server_id = ANY ($1::int[]) AND uid % 100 <> 7`,
          [servers],
        )
      ).rows.map((r) => r.uid);
    const groupUids = await members(group);
    const countryUids = await members(country);
    const pick = (uids: string[]) => uids[Math.floor(Math.random() * uids.length)];
    const anyone = () => String(1 + Math.floor(Math.random() * PLAYERS));
    console.log(
      `group g7: ${fmt(groupUids.length)} players; country CX: ${fmt(countryUids.length)}; ${fmt(READS)} reads each, one connection, SQL only`,
    );
    await time(client, 'global_top10_atp', TOP_SITE_SQL, () => [10]);
    await time(client, 'group_top10_atp', SCOPED_TOP_SITE_SQL, () => [group, 10]);
    await time(client, 'country_top10_atp', SCOPED_TOP_SITE_SQL, () => [country, 10]);
    await time(client, 'global_around_atp', SITE_WINDOW_SQL, () => [anyone(), 5]);
    await time(client, 'group_around_atp', SCOPED_SITE_WINDOW_SQL, () => [group, pick(groupUids), 5]);
    await time(client, 'country_around_atp', SCOPED_SITE_WINDOW_SQL, () => [country, pick(countryUids), 5]);
    await time(client, 'global_top10_chart', TOP_TRACK_SQL, () => [LEVEL, 10]);
    await time(client, 'group_top10_chart', SCOPED_TOP_TRACK_SQL, () => [LEVEL, group, 10]);
    await time(client, 'country_top10_chart', SCOPED_TOP_TRACK_SQL, () => [LEVEL, country, 10]);
    await time(client, 'global_around_chart', TRACK_WINDOW_SQL, () => [LEVEL, anyone(), 5]);
    await time(client, 'group_around_chart', SCOPED_TRACK_WINDOW_SQL, () => [LEVEL, group, pick(groupUids), 5]);
    await time(client, 'country_around_chart', SCOPED_TRACK_WINDOW_SQL, () => [LEVEL, country, pick(countryUids), 5]);
  });
});
