/**
 * Upload with 4 open board periods against the upload with none (issue #44: ≥ 0.9 ×), one run,
 * one service, same database: rounds alternate between "no open period" (every period row closed,
 * so rhythmc_count_period_play finds none) and "4 open periods" (day, week, month and a season).
 * A small variant of bench/upload/run.ts: PLAYERS (20000, all ranked), SEQUENTIAL (500),
 * CONCURRENT (3000), CONCURRENCY (16), SESSIONS (200), ROUNDS (4), MODE (memory | redis).
 *
 *   npm run bench:upload:periods
 *
 * What "none" still pays against the code before periods: the shared advisory lock and one
 * indexed select of the open periods (the function runs either way). Prints one line per
 * measurement with the load average and the ratio of the means.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { AdminApi, call, expectCall } from '../harness/api';
import { BENCH_ADMIN_TOKEN, BENCH_REDIS_URL, intFromEnv, loadAverage, runMain } from '../harness/env';
import { closedLoop, mean } from '../harness/load';
import { gameplayRecord, randomPlay } from '../harness/payloads';
import { dropRedisPrefix } from '../harness/redis';
import { startServiceProcess, stopAllChildren, stopChild } from '../harness/process';
import { generateUploadData, UPLOAD_DATABASE_URL } from './generate';

const PLAYERS = intFromEnv('PLAYERS', 20_000);
const SEQUENTIAL = intFromEnv('SEQUENTIAL', 500);
const CONCURRENT = intFromEnv('CONCURRENT', 3_000);
const CONCURRENCY = intFromEnv('CONCURRENCY', 16);
const SESSIONS = intFromEnv('SESSIONS', 200);
const ROUNDS = intFromEnv('ROUNDS', 4);
const MODE = process.env.MODE === 'redis' ? 'redis' : 'memory';

let clock = Date.now() - 3_600_000;

async function main(): Promise<void> {
  if (process.env.SKIP_GENERATE !== '1')
    await generateUploadData(UPLOAD_DATABASE_URL, PLAYERS, PLAYERS, (line) => console.log(`  ${line}`));
  const prefix = `rhythmc-bench-periods:${randomBytes(4).toString('hex')}:`;
  const service = await startServiceProcess({
    name: `service (${MODE})`,
    source: process.env.SERVICE_SOURCE === 'dist' ? 'dist' : 'src',
    databaseUrl: UPLOAD_DATABASE_URL,
    redisUrl: MODE === 'redis' ? BENCH_REDIS_URL : '',
    adminToken: BENCH_ADMIN_TOKEN,
    log: 'upload-periods-service.log',
    env: {
      REDIS_KEY_PREFIX: prefix,
      SERVER_TOKEN_TTL_SECONDS: '86400',
      PLAYER_TOKEN_TTL_SECONDS: '86400',
      PERIOD_JOB_INTERVAL_SECONDS: '3600',
      LOG_LEVEL: 'info',
    },
  });
  const db = new Client({ connectionString: UPLOAD_DATABASE_URL });
  await db.connect();
  try {
    const base = service.url;
    const admin = new AdminApi(base, BENCH_ADMIN_TOKEN);
    const created = await admin.createServer(`bench-${randomBytes(4).toString('hex')}`);
    const login = await expectCall<{ accessToken: string; serverID: number }>(
      200,
      base,
      'POST',
      '/server/login',
      created.bootstrapToken,
      { pluginVersion: 1, pluginSHA: 'bench' },
    );
    const sessions: Array<{ uid: number; accessToken: string }> = [];
    const picked = new Set<number>();
    while (picked.size < Math.min(SESSIONS, PLAYERS)) picked.add(1 + Math.floor(Math.random() * PLAYERS));
    for (const uid of picked) {
      const player = await expectCall<{ accessToken: string }>(200, base, 'POST', '/player/login', login.accessToken, {
        mode: 'TOKEN',
        version: 1,
        authToken: await admin.netToken(uid),
      });
      sessions.push({ uid, accessToken: player.accessToken });
    }
    let next = 0;
    const body = () => {
      const session = sessions[next++ % sessions.length];
      return JSON.stringify(
        gameplayRecord({ ...session, serverID: login.serverID, ...randomPlay(Math.random), time: (clock += 1_000) }),
      );
    };
    const run = (requests: number, connections: number) =>
      closedLoop({
        baseUrl: base,
        connections,
        requests,
        request: () => ({
          method: 'POST',
          path: '/player/upload',
          headers: { Authorization: `Bearer ${login.accessToken}` },
          body: body(),
        }),
      });

    // The calendar periods (created by the job at start) and a season, all open now.
    await db.query(
      `INSERT INTO board_period (kind, slug, name, starts_at, ends_at) VALUES ('season', $1, 'Bench', now() - interval '1 day', now() + interval '30 days')`,
      [`bench-${randomBytes(3).toString('hex')}`],
    );
    const open = await db.query<{ id: string }>(
      'SELECT id FROM board_period WHERE closed_at IS NULL AND starts_at <= now() AND ends_at > now()',
    );
    if (open.rows.length !== 4) throw new Error(`expected 4 open periods, found ${open.rows.length}`);
    const ids = open.rows.map((row) => row.id);
    const setOpen = (isOpen: boolean) =>
      db.query(
        isOpen
          ? 'UPDATE board_period SET closed_at = NULL, archived_at = NULL WHERE id = ANY($1)'
          : 'UPDATE board_period SET closed_at = now(), archived_at = now() WHERE id = ANY($1)',
        [ids],
      );

    await run(300, 4); // warm-up
    const results: Record<string, Array<{ rps: number; p50: number; p99: number; seqP50: number }>> = {
      none: [],
      four: [],
    };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['none', 'four'] : ['four', 'none'];
      for (const variant of order) {
        await setOpen(variant === 'four');
        const sequential = await run(SEQUENTIAL, 1);
        const loaded = await run(CONCURRENT, CONCURRENCY);
        if (sequential.unexpected + sequential.errors + loaded.unexpected + loaded.errors > 0)
          throw new Error(`${variant}: failed uploads`);
        results[variant].push({ rps: loaded.rps, p50: loaded.p50, p99: loaded.p99, seqP50: sequential.p50 });
        console.log(
          `[r${round + 1}] ${variant === 'none' ? 'no open period ' : '4 open periods '} c${CONCURRENCY} ${loaded.rps.toFixed(0)} req/s ` +
            `p50 ${loaded.p50.toFixed(2)} p99 ${loaded.p99.toFixed(2)} ms; sequential p50 ${sequential.p50.toFixed(2)} ms; load average ${loadAverage()}`,
        );
      }
    }
    const rps = (variant: string) => mean(results[variant].map((r) => r.rps));
    const seq = (variant: string) => mean(results[variant].map((r) => r.seqP50));
    console.log(
      `4 open ÷ none: throughput ${(rps('four') / rps('none')).toFixed(3)} × (${rps('four').toFixed(0)} / ${rps('none').toFixed(0)} req/s), ` +
        `sequential p50 ${seq('four').toFixed(2)} / ${seq('none').toFixed(2)} ms; load average ${loadAverage()}`,
    );
    await call(base, 'POST', '/server/logout', login.accessToken);
  } finally {
    await db.end();
    await stopChild(service);
    if (MODE === 'redis') await dropRedisPrefix(BENCH_REDIS_URL, prefix);
  }
}

runMain(main, stopAllChildren);
