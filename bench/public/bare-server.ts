/**
 * The baseline of the public API benchmark (bench/public/run.ts): a bare Express + pg server
 * running the service's own statements as named prepared statements (parsed and planned once per
 * connection, as the service runs them), with the service's answer shapes, and nothing else: no
 * authentication, rate limit, validation framework, ETag, error mapping, logging or metrics.
 *   GET /server/baltop?limit=N             TOP_BALANCES_SQL (the ban filter of the service's baltop)
 *   GET /public/v1/boards/atp?limit=N      TOP_SITE_SQL
 *   GET /public/v1/boards/charts/:id?limit=N  TOP_TRACK_SQL
 */
import express from 'express';
import { Pool } from 'pg';
import { RankedBalanceRow, TOP_BALANCES_SQL } from '../../src/economy/economy.repository';
import { SiteRow, TOP_SITE_SQL, TOP_TRACK_SQL, TrackRow } from '../../src/ranking/leaderboard.repository';
import { serveBare } from '../harness/bare';
import { PUBLIC_DATABASE_URL } from './generate';

const pool = new Pool({ connectionString: PUBLIC_DATABASE_URL, max: 10 });
const app = express();
app.disable('x-powered-by');
app.set('etag', false);

const limitOf = (value: unknown) => (typeof value === 'string' && /^\d{1,3}$/.test(value) ? Number(value) : 10);
const named = async <Row>(name: string, text: string, values: unknown[]): Promise<Row[]> =>
  (await pool.query({ name, text, values })).rows as Row[];
const fail = (res: express.Response) => () =>
  res.status(500).json({ error: 'INTERNAL_ERROR', message: 'Internal error' });
const round4 = (value: number) => Math.round(value * 10_000) / 10_000;

app.get('/health/ready', (_req, res) => {
  res.json({ status: 'ok' });
});

app.get('/server/baltop', (req, res) => {
  named<RankedBalanceRow>('bare_top_balances', TOP_BALANCES_SQL, [limitOf(req.query.limit)]).then(
    (rows) =>
      res.json(
        rows.map((row, i) => ({
          rank: i + 1,
          uid: Number(row.uid),
          username: row.username,
          displayName: row.display_name || row.username,
          wattHour: Number(row.watt_hour),
        })),
      ),
    fail(res),
  );
});

app.get('/public/v1/boards/atp', (req, res) => {
  named<SiteRow>('bare_top_site', TOP_SITE_SQL, [limitOf(req.query.limit)]).then(
    (rows) =>
      res.json({
        board: 'atp',
        entries: rows.map((row, i) => ({
          rank: i + 1,
          uid: Number(row.uid),
          username: row.username,
          displayName: row.display_name || row.username,
          atp: Number(row.atp),
        })),
      }),
    fail(res),
  );
});

app.get('/public/v1/boards/charts/:levelId', (req, res) => {
  const levelId = Number(req.params.levelId);
  named<TrackRow>('bare_top_track', TOP_TRACK_SQL, [levelId, limitOf(req.query.limit)]).then(
    (rows) =>
      res.json({
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
      }),
    fail(res),
  );
});

serveBare(app, pool);
