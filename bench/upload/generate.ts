/**
 * Data of the score-upload benchmark (and of the network-day benchmark), loaded in bulk into
 * PostgreSQL by the harness generators (bench/harness/generate.ts): players, charts, play
 * records, then the derived tables exactly as the service keeps them: the best per player and
 * chart (SQL with the same arithmetic as src/upload/rating.ts) and the ATP (computed by rating.ts
 * itself, in Node).
 *
 *   npm run bench:upload:generate                       # 1,000,000 players, 10,000,000 plays (about 12 min)
 *   PLAYERS=100000 RANKED=100000 npm run bench:upload:generate
 *
 * The database (BENCH_DATABASE_URL, default rhythmc_bench_upload) is dropped and recreated.
 * run.ts uses generateUploadData's parts to grow the same database from 100k plays to 10M plays in one run.
 */
import { recreateDatabase, withClient } from '../harness/database';
import { benchDatabaseUrl, intFromEnv, runMain, secondsSince } from '../harness/env';
import {
  analyze,
  counts,
  deriveRatings,
  loadCharts,
  loadCollections,
  loadPlayers,
  loadPlays,
} from '../harness/generate';

export const UPLOAD_DATABASE_URL = benchDatabaseUrl('rhythmc_bench_upload');
/** Collections of the generated catalog (what GET /server/collections lists). */
export const GENERATED_TITLES = 200;
export const GENERATED_TAGS = 100;

/** The table of the bare upload handler (bench/upload/bare-server.ts): the record's columns it writes, with the same unique key. */
export const BARE_RECORD_TABLE_SQL =
  'CREATE TABLE IF NOT EXISTS bench_bare_record (id bigserial PRIMARY KEY, uid bigint NOT NULL, level_id int NOT NULL, time_ms bigint NOT NULL, acc float8 NOT NULL, pass boolean NOT NULL, UNIQUE (uid, level_id, time_ms))';

/**
 * Recreates `url` with `players` players, the charts and collections, 10 plays each for the
 * players 1..ranked, their bests and ratings; vacuumed and checkpointed.
 */
export async function generateUploadData(
  url: string,
  players: number,
  ranked: number,
  log: (line: string) => void = console.log,
): Promise<void> {
  const started = Date.now();
  await recreateDatabase(url);
  await withClient(url, async (client) => {
    await client.query(BARE_RECORD_TABLE_SQL);
    await loadPlayers(client, players);
    await loadCharts(client);
    await loadCollections(client, GENERATED_TITLES, GENERATED_TAGS);
    log(`players, charts and collections: ${secondsSince(started)} s`);
    await loadPlays(client, 1, ranked);
    log(`plays: ${secondsSince(started)} s`);
    await deriveRatings(client, 1, ranked);
    log(`bests and ratings: ${secondsSince(started)} s`);
    await analyze(client);
    log(`${JSON.stringify(await counts(client))}, total ${secondsSince(started)} s`);
  });
}

if (require.main === module) {
  const players = intFromEnv('PLAYERS', 1_000_000);
  runMain(() => generateUploadData(UPLOAD_DATABASE_URL, players, intFromEnv('RANKED', players)));
}
