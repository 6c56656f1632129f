/**
 * The baseline of the upload benchmark: a bare Express + pg handler for POST /player/upload that
 * does one insert (the record, into its own table with the same unique key) and one indexed select
 * (the player's ATP), with the service's pool size and no authentication, validation framework,
 * transaction or rank. Started by run.ts and the network-day runner; ready when GET /health/ready answers.
 */
import express from 'express';
import { Pool } from 'pg';
import { benchDatabaseUrl } from '../harness/env';
import { serveBare } from '../harness/bare';

const pool = new Pool({ connectionString: benchDatabaseUrl('rhythmc_bench_upload'), max: 10 });
const app = express();
app.use(express.json({ limit: '256kb' }));

interface Body {
  player: { playerUID: number };
  payload: { levelID: number; time: number; acc: number; pass: boolean };
}

/** Readiness, polled by the harness (bench/harness/process.ts). */
app.get('/health/ready', (_req, res) => {
  res.json({ status: 'ok' });
});

app.post('/player/upload', (req, res) => {
  const { player, payload } = req.body as Body;
  (async () => {
    await pool.query(
      'INSERT INTO bench_bare_record (uid, level_id, time_ms, acc, pass) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (uid, level_id, time_ms) DO NOTHING',
      [player.playerUID, payload.levelID, payload.time, payload.acc, payload.pass],
    );
    const { rows } = await pool.query<{ atp: string }>('SELECT atp FROM player_rating WHERE uid = $1', [
      player.playerUID,
    ]);
    return {
      atp: rows.length > 0 ? Number(rows[0].atp) : 0,
      siteRank: null,
      trackRank: null,
      playRating: 0,
      personalBest: false,
    };
  })().then(
    (body) => res.json(body),
    () => res.status(500).json({ error: 'INTERNAL_ERROR', message: 'Internal error' }),
  );
});

serveBare(app, pool);
