/**
 * The start and stop of every bare Express + pg baseline (bench/<feature>/bare-server.ts): listen
 * on loopback at PORT, print `listening <port>` (what spawnReady waits for), and on SIGTERM close
 * the server and the pool, then exit.
 */
import type { Express } from 'express';
import type { Pool } from 'pg';
import { intFromEnv } from './env';

export function serveBare(app: Express, pool: Pool): void {
  const server = app.listen(intFromEnv('PORT', 0), '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : ''}\n`);
  });
  process.once('SIGTERM', () => {
    server.close();
    void pool.end().then(() => process.exit(0));
  });
}
