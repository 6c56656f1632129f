/**
 * The baseline of the leaderboard benchmark (bench/leaderboards/run.ts): a bare Express + pg
 * server answering the four reads with the service's own SQL (src/upload/leaderboard.repository.ts)
 * and entry shapes, after the service's server-token lookup (one indexed query). Top N: that one
 * statement. Around a player: the same window statement, with the player's keys read inside it
 * (one statement). It answers no rank for a window (it has no rank index and a count is O(rank)),
 * and no framework, validation, error mapping, logging or metrics.
 */
import express from 'express';
import { createHash } from 'node:crypto';
import { Pool } from 'pg';
import { SiteRow, SITE_WINDOW_SQL, TOP_SITE_SQL, TOP_TRACK_SQL, TrackRow, TRACK_WINDOW_SQL } from '../../src/upload/leaderboard.repository';
import { serveBare } from '../harness/bare';
import { LEADERBOARDS_DATABASE_URL } from './generate';

const pool = new Pool({ connectionString: LEADERBOARDS_DATABASE_URL, max: 10 });
const app = express();
app.disable('x-powered-by');
app.set('etag', false);

/** The window statements with the player's own keys read in them instead of passed in (one pass: inserted text is not rescanned). */
const renumber = (sql: string, map: Record<string, string>) => sql.replace(/\$(\d)\b/g, (_match, n: string) => map[n]);
const SITE_WINDOW_BY_UID = renumber(SITE_WINDOW_SQL, { 1: '(SELECT atp FROM player_rating WHERE uid = $1)', 2: '$1', 3: '$2' });
const TRACK_WINDOW_BY_UID = renumber(TRACK_WINDOW_SQL, {
  1: '$1',
  2: '(SELECT acc FROM player_chart_best WHERE uid = $2 AND level_id = $1)',
  3: '(SELECT first_time_ms FROM player_chart_best WHERE uid = $2 AND level_id = $1)',
  4: '$2',
  5: '$3',
});

/** The anchor and the k nearest rows on each side, as the service keeps them (rows in board order, tagged by part). */
function trim<Row extends { part: number }>(rows: Row[], k: number): Row[] {
  const ahead = rows.filter((row) => row.part === 1);
  return [...ahead.slice(Math.max(0, ahead.length - k)), ...rows.filter((row) => row.part === 0), ...rows.filter((row) => row.part === 2).slice(0, k)];
}

const intParam = (value: unknown, fallback: number) => (typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : fallback);
const name = (row: { username: string; display_name: string | null }) => ({ username: row.username, displayName: row.display_name || row.username });
const site = (row: SiteRow, rank: number | null) => ({ rank, uid: Number(row.uid), ...name(row), atp: Number(row.atp) });
const track = (row: TrackRow, rank: number | null) => ({ rank, uid: Number(row.uid), ...name(row), acc: row.acc, rating: Math.round(row.rating * 10_000) / 10_000 });

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
    const { rows } = await pool.query<SiteRow & { part: number }>(SITE_WINDOW_BY_UID, [req.query.around, k]);
    return { board: 'atp', entries: trim(rows, k).map((row) => site(row, null)) };
  }
  const { rows } = await pool.query<SiteRow>(TOP_SITE_SQL, [intParam(req.query.limit, 10)]);
  return { board: 'atp', entries: rows.map((row, i) => site(row, i + 1)) };
});

read('/server/leaderboards/charts/:levelId', async (req) => {
  const levelId = Number(req.params.levelId);
  if (typeof req.query.around === 'string') {
    const k = intParam(req.query.k, 5);
    const { rows } = await pool.query<TrackRow & { part: number }>(TRACK_WINDOW_BY_UID, [levelId, req.query.around, k]);
    return { board: 'chart', levelId, entries: trim(rows, k).map((row) => track(row, null)) };
  }
  const { rows } = await pool.query<TrackRow>(TOP_TRACK_SQL, [levelId, intParam(req.query.limit, 10)]);
  return { board: 'chart', levelId, entries: rows.map((row, i) => track(row, i + 1)) };
});

serveBare(app, pool);
