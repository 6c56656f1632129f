/**
 * Data generators of the benchmarks, loading PostgreSQL set-wise (INSERT … SELECT
 * generate_series, in key order so every index is appended to): players, balances, bans, charts,
 * collections, plays and the derived rating tables exactly as the service keeps them; and
 * resource files on disk.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from 'pg';
import { atpTenThousandths } from '../../src/upload/rating';

export const CHARTS = 2_000;
export const PLAYS_PER_PLAYER = 10;
/** payload.time of generated plays: 2026-01-01 plus one second per play. */
export const GENERATED_TIME_BASE = Date.UTC(2026, 0, 1);
const CHUNK = 50_000;

/** The uuid of generated player `uid`: fixed, so a simulator can log existing players in ONLINE. */
export function generatedPlayerUuid(uid: number): string {
  return `00000000-0000-4000-8000-${uid.toString(16).padStart(12, '0')}`;
}

/**
 * Players with uids 1..count: username `bench_<uid>`, every fourth with a display name, and the
 * uuid of generatedPlayerUuid. The uid sequence continues after them.
 */
export async function loadPlayers(client: Client, count: number): Promise<void> {
  await client.query(
    `INSERT INTO player (uid, uuid, username, display_name, extra_options)
     SELECT g, ('00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, 'bench_' || g,
            CASE WHEN g % 4 = 0 THEN 'Player ' || g ELSE '' END, '{}'::jsonb
       FROM generate_series(1, $1::bigint) AS g`,
    [count],
  );
  await client.query(
    `SELECT setval(pg_get_serial_sequence('player', 'uid'), GREATEST((SELECT max(uid) FROM player), 1))`,
  );
}

/** A balance for each of the players 1..count, up to 10^9 Wh: at a million players equal values occur, so the uid tie-break matters. */
export async function loadBalances(client: Client, count: number): Promise<void> {
  await client.query(
    `INSERT INTO player_balance (uid, watt_hour, updated_at) SELECT g, floor(random() * 1e9)::bigint, now() FROM generate_series(1, $1::bigint) AS g`,
    [count],
  );
}

/** Bans every `every`-th player of 1..count (permanent), so orderings that skip banned players do real work. */
export async function loadBans(client: Client, count: number, every: number): Promise<void> {
  await client.query(
    `INSERT INTO player_ban (uid, reason) SELECT g, 'bench' FROM generate_series($2::bigint, $1::bigint, $2::bigint) AS g`,
    [count, every],
  );
}

/** `count` active charts (level ids 1..count) with constants from 1 to 15. */
export async function loadCharts(client: Client, count = CHARTS): Promise<void> {
  await client.query(
    `INSERT INTO chart (level_id, name, difficulty_constant, version, active)
     SELECT g, 'Bench chart ' || g, round((1 + 14 * ((g * 7919) % 1000) / 1000.0)::numeric, 1)::float8, '1.0', true
       FROM generate_series(1, $1) AS g`,
    [count],
  );
}

/** The key of generated collection `i` (titles first, then tags). */
export const generatedCollectionKey = (i: number, titles: number) =>
  i < titles ? `bench:titles.t${i}` : `bench:tags.g${i - titles}`;

/** `titles` title and `tags` tag collections shaped like the plugin's, keys from generatedCollectionKey. */
export async function loadCollections(client: Client, titles: number, tags: number): Promise<void> {
  await client.query(
    `INSERT INTO collection (key, type, unlock_method, properties)
     SELECT CASE WHEN g < $1::int THEN 'bench:titles.t' || g ELSE 'bench:tags.g' || (g - $1::int) END,
            CASE WHEN g < $1::int THEN 'title' ELSE 'tag' END,
            jsonb_build_object('type', 'ACHIEVEMENT', 'mode', 'ALL', 'events', jsonb_build_array('play_' || g)),
            jsonb_build_object('title', '§6Bench ' || g, 'description', 'Generated collection ' || g, 'rarity', 'rare', 'position', g % 2 = 0)
       FROM generate_series(0, $1::int + $2::int - 1) AS g`,
    [titles, tags],
  );
}

/**
 * PLAYS_PER_PLAYER plays for each player of uids [from, to]: charts skewed towards low level ids
 * (popular charts have many players), 15 % at 100 %, the rest between 80 and 100, 10 % failed.
 */
export async function loadPlays(client: Client, from: number, to: number): Promise<void> {
  for (let start = from; start <= to; start += CHUNK) {
    const end = Math.min(to, start + CHUNK - 1);
    await client.query(
      `INSERT INTO play_record (uid, level_id, time_ms, player_timestamp_ms, acc, pass, full_combo, all_perfect, is_new_record,
         max_combo, is_rival, is_win, rival_uid, rival_acc, tap_perfect, tap_great, tap_miss, hold_perfect, hold_great, hold_miss,
         dodge_perfect, dodge_great, dodge_miss, look_perfect, look_great, look_miss, player_arena, server_id, server_name,
         server_country, server_session_id, player_session_id)
       SELECT p.uid, p.level_id, p.time_ms, p.time_ms + 250, p.acc, p.pass, p.acc = 100, p.acc = 100, false,
              300, false, false, 0, 0, 300, 5, 1, 40, 2, 0, 10, 1, 0, 8, 0, 0, 'bench', 1, 'bench', 'DE',
              '00000000-0000-4000-8000-000000000000', '00000000-0000-4000-8000-000000000000'
         FROM (SELECT u AS uid,
                      1 + floor($3 * power(random(), 2))::int AS level_id,
                      $4::bigint + ((u - 1) * $5 + k) * 1000 AS time_ms,
                      CASE WHEN random() < 0.15 THEN 100 ELSE round((80 + 20 * sqrt(random()))::numeric, 2)::float8 END AS acc,
                      random() > 0.1 AS pass
                 FROM generate_series($1::bigint, $2::bigint) AS u, generate_series(0, $5 - 1) AS k
                ORDER BY u, k) AS p
       ON CONFLICT (uid, level_id, time_ms) DO NOTHING`,
      [start, end, CHARTS, GENERATED_TIME_BASE, PLAYS_PER_PLAYER],
    );
  }
}

/** The rating of src/upload/rating.ts written in SQL with the same operations in the same order. */
const RATING_SQL = (c: string, acc: string) => `CASE
  WHEN ${acc} >= 100 THEN ${c} + 2
  WHEN ${acc} >= 98 THEN ${c} + 1 + (${acc} - 98) / 2
  WHEN ${acc} >= 95 THEN ${c} + (${acc} - 95) / 3
  ELSE greatest(0, ${c} - (95 - ${acc}) / 5) END`;

/** player_chart_best and player_rating of the players [from, to], from their records, as the service would hold them. */
export async function deriveRatings(client: Client, from: number, to: number): Promise<void> {
  for (let start = from; start <= to; start += CHUNK) {
    const end = Math.min(to, start + CHUNK - 1);
    await client.query(
      `INSERT INTO player_chart_best (uid, level_id, acc, first_time_ms, record_id, rating, version, updated_at)
       SELECT DISTINCT ON (r.uid, r.level_id) r.uid, r.level_id, r.acc, r.time_ms, r.id, ${RATING_SQL('c.difficulty_constant', 'r.acc')}, 1, now()
         FROM play_record r JOIN chart c ON c.level_id = r.level_id
        WHERE r.uid BETWEEN $1 AND $2 AND r.pass
        ORDER BY r.uid, r.level_id, r.acc DESC, r.time_ms, r.id`,
      [start, end],
    );
    const { rows } = await client.query<{ uid: string; ratings: number[] }>(
      'SELECT uid, array_agg(rating) AS ratings FROM player_chart_best WHERE uid BETWEEN $1 AND $2 GROUP BY uid ORDER BY uid',
      [start, end],
    );
    await client.query(
      `INSERT INTO player_rating (uid, atp, version, updated_at) SELECT u, a, 1, now() FROM unnest($1::bigint[], $2::numeric[]) AS t(u, a)`,
      [rows.map((row) => row.uid), rows.map((row) => (atpTenThousandths(row.ratings) / 10_000).toFixed(4))],
    );
  }
}

/** Statistics and visibility maps up to date (what autovacuum would have done), and the dirty pages written now rather than during a measurement. */
export async function analyze(
  client: Client,
  tables = [
    'play_record',
    'player_chart_best',
    'player_rating',
    'player',
    'chart',
    'player_balance',
    'player_ban',
    'collection',
  ],
): Promise<void> {
  await client.query(`VACUUM ANALYZE ${tables.join(', ')}`);
  await client.query('CHECKPOINT');
}

export interface Counts {
  players: number;
  plays: number;
  bests: number;
  ranked: number;
  collections: number;
  charts: number;
}

export async function counts(client: Client): Promise<Counts> {
  const { rows } = await client.query<Counts>(
    `SELECT (SELECT count(*) FROM player)::int AS players, (SELECT count(*) FROM play_record)::int AS plays,
            (SELECT count(*) FROM player_chart_best)::int AS bests, (SELECT count(*) FROM player_rating)::int AS ranked,
            (SELECT count(*) FROM collection)::int AS collections, (SELECT count(*) FROM chart)::int AS charts`,
  );
  return rows[0];
}

export interface GeneratedTree {
  files: number;
  bytes: number;
}

/**
 * Writes a RESOURCE_DIR of `count` files shaped like a real one: 2 % language files, up to 10
 * packs (`packBytes` each, 1 MiB by default), the rest song data (chart JSON of 1-8 KiB and every
 * 50th a 64 KiB audio-like file), 100 files per song folder.
 */
export function generateResourceTree(root: string, count: number, packBytes = 1024 * 1024): GeneratedTree {
  let bytes = 0;
  const write = (path: string, size: number) => {
    const absolute = join(root, path);
    mkdirSync(join(absolute, '..'), { recursive: true });
    writeFileSync(absolute, randomBytes(size));
    bytes += size;
  };
  const packs = Math.min(10, Math.max(1, Math.floor(count / 10)));
  const lang = Math.floor(count * 0.02);
  for (let i = 0; i < packs; i++) write(`packs/pack-${i}.zip`, packBytes);
  for (let i = 0; i < lang; i++)
    write(`lang/${String(i % 40).padStart(2, '0')}/strings-${i}.json`, 512 + (i % 4) * 512);
  for (let i = 0; i < count - packs - lang; i++) {
    const size = i % 50 === 0 ? 64 * 1024 : 1024 + (i % 8) * 1024;
    write(`data/songs/${Math.floor(i / 100)}/file-${i}.${i % 50 === 0 ? 'ogg' : 'json'}`, size);
  }
  return { files: count, bytes };
}
