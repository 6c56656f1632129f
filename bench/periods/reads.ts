/**
 * Archived against live board reads over HTTP (issue #44: archived p50 within 1.2 × of live), on the
 * data of bench/periods/close.ts after a run that archived season B and left A open: A and B hold
 * the same rows, so "live" is A's board and "archived" is B's, read by the same route
 * (`GET /admin/boards/…?period=<id>`) with the same players, shape by shape, live then archived:
 * ATP top 10, ATP around a player k=5, chart 1 top 10, chart 1 around k=5; READS one at a time,
 * then LOADED over CONCURRENCY connections (AROUND_READS and AROUND_LOADED for the around shapes:
 * a live window's rank is a COUNT of the rows ahead, seconds at 1M).
 *
 *   BENCH_DATABASE_URL=… npm run bench:periods:reads
 */
import { BENCH_ADMIN_TOKEN, benchDatabaseUrl, fmt, intFromEnv, loadAverage, runMain } from '../harness/env';
import { withClient } from '../harness/database';
import { closedLoop } from '../harness/load';
import { startServiceProcess, stopAllChildren, stopChild } from '../harness/process';

const URL = benchDatabaseUrl('rhythmc_bench_periods_close');
const PLAYERS = intFromEnv('PLAYERS', 1_000_000);
const READS = intFromEnv('READS', 500);
const LOADED = intFromEnv('LOADED', 2_000);
const AROUND_READS = intFromEnv('AROUND_READS', 20);
const AROUND_LOADED = intFromEnv('AROUND_LOADED', 32);
const CONCURRENCY = intFromEnv('CONCURRENCY', 16);
const auth = { Authorization: `Bearer ${BENCH_ADMIN_TOKEN}` };

runMain(async () => {
  const periods = await withClient(URL, (c) =>
    c.query<{ slug: string; id: string; archived: boolean }>(
      `SELECT slug, id, archived_at IS NOT NULL AS archived FROM board_period WHERE slug IN ('bench-close-a', 'bench-close-b') ORDER BY slug`,
    ),
  );
  const [a, b] = periods.rows;
  if (!a || !b || a.archived || !b.archived)
    throw new Error('needs season A open and B archived (bench:periods:close)');
  const service = await startServiceProcess({
    name: 'service',
    source: 'src',
    databaseUrl: URL,
    adminToken: BENCH_ADMIN_TOKEN,
    log: 'periods-reads-service.log',
    env: { PERIOD_JOB_INTERVAL_SECONDS: '3600' },
  });
  try {
    // Players on every board of chart 1 and ATP: every player; not banned (every 100th is).
    const players = Array.from({ length: 500 }, () => {
      const uid = 1 + Math.floor(Math.random() * PLAYERS);
      return uid % 100 === 0 ? uid + 1 : uid;
    });
    const shapes = [
      { name: 'ATP top 10', path: '/admin/boards/atp?limit=10', reads: READS, loaded: LOADED },
      { name: 'ATP around k=5', path: '/admin/boards/atp?k=5&around=', reads: AROUND_READS, loaded: AROUND_LOADED },
      { name: 'chart 1 top 10', path: '/admin/boards/charts/1?limit=10', reads: READS, loaded: LOADED },
      {
        name: 'chart 1 around k=5',
        path: '/admin/boards/charts/1?k=5&around=',
        reads: AROUND_READS,
        loaded: AROUND_LOADED,
      },
    ];
    for (const shape of shapes) {
      const figures: Record<string, number[][]> = {};
      for (const [label, period] of [
        ['live', a.id],
        ['archived', b.id],
      ]) {
        let next = 0; // the same players in the same order for both
        const run = async (connections: number, requests: number) => {
          const r = await closedLoop({
            baseUrl: service.url,
            connections,
            requests,
            request: () => ({
              method: 'GET',
              path: `${shape.path}${shape.path.endsWith('=') ? players[next++ % players.length] : ''}&period=${period}`,
              headers: auth,
            }),
          });
          if (r.unexpected + r.errors > 0)
            console.log(
              `  ${shape.name} ${label} c${connections}: ${r.unexpected} of ${r.requests} not 200, ${r.errors} errors`,
            );
          return [r.p50, r.p99, r.rps];
        };
        await run(2, Math.min(20, shape.reads));
        next = 0;
        figures[label] = [await run(1, shape.reads), await run(CONCURRENCY, shape.loaded)];
      }
      const [l, x] = [figures.live, figures.archived];
      console.log(
        `${shape.name.padEnd(19)} one at a time: live p50 ${fmt(l[0][0], 2)} p99 ${fmt(l[0][1], 2)} ms, archived p50 ${fmt(x[0][0], 2)} p99 ${fmt(x[0][1], 2)} ms, ` +
          `ratio ${fmt(x[0][0] / l[0][0], 2)} × | c${CONCURRENCY}: live p50 ${fmt(l[1][0], 2)} p99 ${fmt(l[1][1], 2)} ms ${fmt(l[1][2])} req/s, ` +
          `archived p50 ${fmt(x[1][0], 2)} p99 ${fmt(x[1][1], 2)} ms ${fmt(x[1][2])} req/s, ratio ${fmt(x[1][0] / l[1][0], 2)} × — load ${loadAverage().toFixed(2)}`,
      );
    }
  } finally {
    await stopChild(service);
  }
}, stopAllChildren);
