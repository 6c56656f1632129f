/**
 * The baseline: a bare Express + pg handler for GET /server/baltop running the service's own
 * ranking SQL (TOP_BALANCES_SQL) with the same pool size, and no authentication, validation
 * framework or error mapping; plus a variant that also does the service's token lookup.
 * Started by run.ts; ready when GET /health/ready answers.
 */
import express from 'express';
import { createHash } from 'node:crypto';
import { Pool } from 'pg';
import { TOP_BALANCES_SQL, RankedBalanceRow } from '../../src/economy/economy.repository';
import { benchDatabaseUrl } from '../harness/env';
import { serveBare } from '../harness/bare';
import { baltopEntries } from '../public/answers';

const pool = new Pool({ connectionString: benchDatabaseUrl('rhythmc_bench_economy'), max: 10 });
const app = express();

async function baltop(limitParam: unknown): Promise<unknown[]> {
  const limit = typeof limitParam === 'string' && /^\d{1,3}$/.test(limitParam) ? Number(limitParam) : 10;
  const { rows } = await pool.query<RankedBalanceRow>(TOP_BALANCES_SQL, [limit]);
  return baltopEntries(rows);
}

/** Readiness, polled by the harness (bench/harness/process.ts). */
app.get('/health/ready', (_req, res) => {
  res.json({ status: 'ok' });
});

const fail = (res: express.Response) => () =>
  res.status(500).json({ error: 'INTERNAL_ERROR', message: 'Internal error' });

/** The baseline the issue asks for: the ranking SQL and nothing else. */
app.get('/server/baltop', (req, res) => {
  baltop(req.query.limit).then((body) => res.json(body), fail(res));
});

/**
 * The same plus the one query every authenticated request of the service makes: the server
 * session looked up by the SHA-256 of the bearer token. Shows how much of the gap that query is.
 */
app.get('/with-token-check/server/baltop', (req, res) => {
  const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (!token) {
    res.status(401).json({ error: 'UNAUTHORIZED', message: 'Missing bearer server access token' });
    return;
  }
  pool
    .query<{ token_expires_at: Date; ended_at: Date | null }>(
      'SELECT id, server_id, token_expires_at, ended_at FROM server_session WHERE token_hash = $1 LIMIT 1',
      [createHash('sha256').update(token).digest('hex')],
    )
    .then(async ({ rows }) => {
      const session = rows[0];
      if (!session || session.ended_at !== null || session.token_expires_at.getTime() <= Date.now()) {
        res.status(401).json({ error: 'UNAUTHORIZED', message: 'Invalid or expired server access token' });
        return;
      }
      res.json(await baltop(req.query.limit));
    })
    .catch(fail(res));
});

serveBare(app, pool);
