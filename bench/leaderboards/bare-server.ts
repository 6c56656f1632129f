/**
 * The baseline of the leaderboard benchmark (bench/leaderboards/run.ts): a bare Express + pg
 * server answering the four reads with the service's own SQL (src/ranking/leaderboard.repository.ts)
 * and entry shapes, after the service's server-token lookup (one indexed query): one statement
 * per read, named (prepared once per connection) as the service runs them. It answers no rank for a
 * window (it has no rank index and a count is O(rank)), and has no framework, validation, error
 * mapping, logging or metrics.
 */
import express from 'express';
import { createHash } from 'node:crypto';
import { Pool } from 'pg';
import {
  SiteRow,
  SITE_WINDOW_SQL,
  toWindow,
  TOP_SITE_SQL,
  TOP_TRACK_SQL,
  TrackRow,
  TRACK_WINDOW_SQL,
  Window,
  WindowRow,
} from '../../src/ranking/leaderboard.repository';
import { serveBare } from '../harness/bare';
import { LEADERBOARDS_DATABASE_URL } from './generate';

const pool = new Pool({ connectionString: LEADERBOARDS_DATABASE_URL, max: 10 });
const app = express();
app.disable('x-powered-by');
app.set('etag', false);

const inOrder = <Row>(window: Window<Row>): Row[] => [
  ...window.ahead,
  ...(window.anchor ? [window.anchor] : []),
  ...window.behind,
];
const intParam = (value: unknown, fallback: number) =>
  typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : fallback;
const name = (row: { username: string; display_name: string | null }) => ({
  username: row.username,
  displayName: row.display_name || row.username,
});
const site = (row: SiteRow, rank: number | null) => ({
  rank,
  uid: Number(row.uid),
  ...name(row),
  atp: Number(row.atp),
});
const track = (row: TrackRow, rank: number | null) => ({
  rank,
  uid: Number(row.uid),
  ...name(row),
  acc: row.acc,
  rating: Math.round(row.rating * 10_000) / 10_000,
});

/** The service's server-token check: one indexed lookup. */
async function authorised(req: express.Request, res: express.Response): Promise<boolean> {
  const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (!token) {
    res.status(401).json({ error: 'UNAUTHORIZED', message: 'Missing bearer server access token' });
    return false;
  }
  const { rows } = await pool.query<{ token_expires_at: Date; ended_at: Date | null }>(
    'SELECT id, server_id, token_expires_at, ended_at FROM server_session WHERE token_hash = $1 LIMIT 1',
    [createHash('sha256').update(token).digest('hex')],
  );
  const session = rows[0];
  if (!session || session.ended_at !== null || session.token_expires_at.getTime() <= Date.now()) {
    res.status(401).json({ error: 'UNAUTHORIZED', message: 'Invalid or expired server access token' });
    return false;
  }
  return true;
}

function read(path: string, answer: (req: express.Request) => Promise<unknown>): void {
  app.get(path, (req, res) => {
    authorised(req, res)
      .then(async (ok) => {
        if (ok) res.json(await answer(req));
      })
      .catch(() => res.status(500).json({ error: 'INTERNAL_ERROR', message: 'Internal error' }));
  });
}

app.get('/health/ready', (_req, res) => {
  res.json({ status: 'ok' });
});

read('/server/leaderboards/atp', async (req) => {
  if (typeof req.query.around === 'string') {
    const k = intParam(req.query.k, 5);
    const { rows } = await pool.query<WindowRow<SiteRow>>({
      name: 'site_window',
      text: SITE_WINDOW_SQL,
      values: [req.query.around, k],
    });
    return { board: 'atp', entries: inOrder(toWindow(rows, k)).map((row) => site(row, null)) };
  }
  const { rows } = await pool.query<SiteRow>({
    name: 'top_site',
    text: TOP_SITE_SQL,
    values: [intParam(req.query.limit, 10)],
  });
  return { board: 'atp', entries: rows.map((row, i) => site(row, i + 1)) };
});

read('/server/leaderboards/charts/:levelId', async (req) => {
  const levelId = Number(req.params.levelId);
  if (typeof req.query.around === 'string') {
    const k = intParam(req.query.k, 5);
    const { rows } = await pool.query<WindowRow<TrackRow>>({
      name: 'track_window',
      text: TRACK_WINDOW_SQL,
      values: [levelId, req.query.around, k],
    });
    return { board: 'chart', levelId, entries: inOrder(toWindow(rows, k)).map((row) => track(row, null)) };
  }
  const { rows } = await pool.query<TrackRow>({
    name: 'top_track',
    text: TOP_TRACK_SQL,
    values: [levelId, intParam(req.query.limit, 10)],
  });
  return { board: 'chart', levelId, entries: rows.map((row, i) => track(row, i + 1)) };
});

serveBare(app, pool);
