/**
 * The baselines of the public API benchmark (bare-server.ts: Express alone; nest-floor-server.ts:
 * NestJS on Express with nothing of the service's) run the service's statements as named prepared
 * statements and answer with the service's shapes. Both take them from here, so they differ only
 * in the framework around them.
 */
import type { Pool } from 'pg';
import { RankedBalanceRow, TOP_BALANCES_SQL } from '../../src/economy/economy.repository';
import { SiteRow, TOP_SITE_SQL, TOP_TRACK_SQL, TrackRow } from '../../src/ranking/leaderboard.repository';

/** `?limit=`: 1 to 3 digits, else 10 (the service validates; a baseline only needs the benchmark's values). */
export const limitOf = (value: unknown) => (typeof value === 'string' && /^\d{1,3}$/.test(value) ? Number(value) : 10);

const round4 = (value: number) => Math.round(value * 10_000) / 10_000;

const named = async <Row>(pool: Pool, name: string, text: string, values: unknown[]): Promise<Row[]> =>
  (await pool.query({ name, text, values })).rows as Row[];

/** The service's baltop answer of TOP_BALANCES_SQL's rows (every baseline of baltop: economy, reads, public). */
export const baltopEntries = (rows: readonly RankedBalanceRow[]) =>
  rows.map((row, i) => ({
    rank: i + 1,
    uid: Number(row.uid),
    username: row.username,
    displayName: row.display_name || row.username,
    wattHour: Number(row.watt_hour),
  }));

/** GET /server/baltop?limit=N: TOP_BALANCES_SQL (the ban filter of the service's baltop). */
export async function baltop(pool: Pool, limit: number) {
  return baltopEntries(await named<RankedBalanceRow>(pool, 'bare_top_balances', TOP_BALANCES_SQL, [limit]));
}

/** GET /public/v1/boards/atp?limit=N: TOP_SITE_SQL. */
export async function atpBoard(pool: Pool, limit: number) {
  const rows = await named<SiteRow>(pool, 'bare_top_site', TOP_SITE_SQL, [limit]);
  return {
    board: 'atp',
    entries: rows.map((row, i) => ({
      rank: i + 1,
      uid: Number(row.uid),
      username: row.username,
      displayName: row.display_name || row.username,
      atp: Number(row.atp),
    })),
  };
}

/** GET /public/v1/boards/charts/:levelId?limit=N: TOP_TRACK_SQL. */
export async function chartBoard(pool: Pool, levelId: number, limit: number) {
  const rows = await named<TrackRow>(pool, 'bare_top_track', TOP_TRACK_SQL, [levelId, limit]);
  return {
    board: 'chart',
    levelId,
    entries: rows.map((row, i) => ({
      rank: i + 1,
      uid: Number(row.uid),
      username: row.username,
      displayName: row.display_name || row.username,
      acc: row.acc,
      rating: round4(row.rating),
    })),
  };
}
