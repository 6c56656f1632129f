/**
 * The baseline of the public API benchmark (bench/public/run.ts): a bare Express + pg server
 * running the service's own statements as named prepared statements (parsed and planned once per
 * connection, as the service runs them), with the service's answer shapes (answers.ts), and nothing
 * else: no authentication, rate limit, validation framework, ETag, error mapping, logging or metrics.
 *   GET /server/baltop?limit=N             TOP_BALANCES_SQL (the ban filter of the service's baltop)
 *   GET /public/v1/boards/atp?limit=N      TOP_SITE_SQL
 *   GET /public/v1/boards/charts/:id?limit=N  TOP_TRACK_SQL
 */
import express from 'express';
import { Pool } from 'pg';
import { serveBare } from '../harness/bare';
import { atpBoard, baltop, chartBoard, limitOf } from './answers';
import { PUBLIC_DATABASE_URL } from './generate';

const pool = new Pool({ connectionString: PUBLIC_DATABASE_URL, max: 10 });
const app = express();
app.disable('x-powered-by');
app.set('etag', false);

const answer = (res: express.Response, work: Promise<unknown>) =>
  work.then(
    (body) => res.json(body),
    () => res.status(500).json({ error: 'INTERNAL_ERROR', message: 'Internal error' }),
  );

app.get('/health/ready', (_req, res) => {
  res.json({ status: 'ok' });
});

app.get('/server/baltop', (req, res) => {
  void answer(res, baltop(pool, limitOf(req.query.limit)));
});

app.get('/public/v1/boards/atp', (req, res) => {
  void answer(res, atpBoard(pool, limitOf(req.query.limit)));
});

app.get('/public/v1/boards/charts/:levelId', (req, res) => {
  void answer(res, chartBoard(pool, Number(req.params.levelId), limitOf(req.query.limit)));
});

serveBare(app, pool);
