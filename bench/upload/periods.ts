/**
 * Upload with 4 open board periods against the upload with none (issue #44: ≥ 0.9 ×), one run,
 * one service, same database: rounds alternate between "no open period" (every period row closed,
 * so rhythmc_count_period_play finds none) and "4 open periods" (day, week, month and a season).
 * A small variant of bench/upload/run.ts: PLAYERS (20000, all ranked), SEQUENTIAL (500),
 * CONCURRENT (3000), CONCURRENCY (16), SESSIONS (200), ROUNDS (4), MODE (memory | redis).
 *
 *   npm run bench:upload:periods
 *   PLAYERS=1000000 PERIOD_FILL=1 npm run bench:upload:periods     # 10M plays; SKIP_GENERATE=1 to reuse them
 *
 * PERIOD_FILL=1 (default off): once the 4 periods exist, their boards are filled from the
 * players' all-time bests and ATP (period-fill.ts: the whole network in the season and the month,
 * a half in the week, a tenth in the day), so the open periods are as big as a big network's,
 * then the run waits (up to SETTLE_SECONDS, 300) for the 1-minute load to fall below 2.5.
 * SKIP_GENERATE=1 empties the period tables a previous run left before the service starts.
 * Closed ("none") periods are marked archived in blocks, so the period job never archives them.
 *
 * What "none" still pays against the code before periods: the shared advisory lock and one
 * indexed select of the open periods (the function runs either way). Prints one line per
 * measurement with the load average and the ratio of the means.
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { AdminApi, call, expectCall } from '../harness/api';
import { withClient } from '../harness/database';
import {
  BENCH_ADMIN_TOKEN,
  BENCH_REDIS_URL,
  assertBenchDatabase,
  intFromEnv,
  loadAverage,
  runMain,
} from '../harness/env';
import { cpuPerRequest, type CpuProbe, sampleCpu } from '../harness/cpu';
import { closedLoop, mean } from '../harness/load';
import { gameplayRecord, randomPlay } from '../harness/payloads';
import { dropRedisPrefix } from '../harness/redis';
import { startServiceProcess, stopAllChildren, stopChild } from '../harness/process';
import { generateUploadData, UPLOAD_DATABASE_URL } from './generate';
import { clearPeriods, fillPeriods } from './period-fill';

const PLAYERS = intFromEnv('PLAYERS', 20_000);
const SEQUENTIAL = intFromEnv('SEQUENTIAL', 500);
const CONCURRENT = intFromEnv('CONCURRENT', 3_000);
const CONCURRENCY = intFromEnv('CONCURRENCY', 16);
const SESSIONS = intFromEnv('SESSIONS', 200);
const ROUNDS = intFromEnv('ROUNDS', 4);
const MODE = process.env.MODE === 'redis' ? 'redis' : 'memory';
const PERIOD_FILL = process.env.PERIOD_FILL === '1';
const SETTLE_SECONDS = intFromEnv('SETTLE_SECONDS', 300);

/**
 * The plays' payload time: now, one millisecond apart at least (unique per player and chart). A
 * clock running ahead of the server's (1 s a play from an hour ago: 28,300 plays end 7 hours
 * ahead) gets every play past now + 5 min flagged `time` (score-checks.ts), and a flagged play is
 * not counted: no best, no period step.
 */
let clock = 0;

async function main(): Promise<void> {
  if (process.env.SKIP_GENERATE !== '1')
    await generateUploadData(UPLOAD_DATABASE_URL, PLAYERS, PLAYERS, (line) => console.log(`  ${line}`));
  else {
    // A previous run's periods: closed, so the day's calendar periods would stay closed (ON CONFLICT
    // DO NOTHING) and the period job would archive them at the service's start.
    assertBenchDatabase(UPLOAD_DATABASE_URL);
    await withClient(UPLOAD_DATABASE_URL, clearPeriods);
    console.log('  period tables emptied (SKIP_GENERATE)');
  }
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
        gameplayRecord({
          ...session,
          serverID: login.serverID,
          ...randomPlay(Math.random),
          time: (clock = Math.max(clock + 1, Date.now())),
        }),
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
    // Closed periods are marked archived in blocks too: the period job (PeriodRepository.unarchived)
    // would otherwise archive them at its next tick, every board whole (1M rows with PERIOD_FILL).
    const setOpen = (isOpen: boolean) =>
      db.query(
        isOpen
          ? 'UPDATE board_period SET closed_at = NULL, archived_at = NULL, archived_in_blocks = false WHERE id = ANY($1)'
          : 'UPDATE board_period SET closed_at = now(), archived_at = now(), archived_in_blocks = true WHERE id = ANY($1)',
        [ids],
      );
    if (PERIOD_FILL) {
      const filled = await withClient(UPLOAD_DATABASE_URL, (client) =>
        fillPeriods(client, ids, (line) => console.log(`  ${line}`)),
      );
      for (const size of filled.sizes)
        console.log(
          `  ${size.table}: ${size.rows} rows, heap ${size.heap}, indexes ${size.indexes}, total ${size.total}`,
        );
      const settleStarted = Date.now();
      while (loadAverage() >= 2.5 && Date.now() - settleStarted < SETTLE_SECONDS * 1_000)
        await new Promise((resolve) => setTimeout(resolve, 10_000));
      console.log(`  settled ${((Date.now() - settleStarted) / 1000).toFixed(0)} s, load average ${loadAverage()}`);
    }

    await run(300, 4); // warm-up
    const lastWarmRecord = (await db.query<{ id: string }>('SELECT coalesce(max(id), 0) AS id FROM play_record'))
      .rows[0].id;
    // CPU an upload of the c16 part: the service process, the benchmark database's backends, this driver.
    const probe: CpuProbe = { httpPids: [service.pid], monitor: db, redisPid: null };
    const results: Record<
      string,
      Array<{ rps: number; p50: number; p99: number; seqP50: number; service: number; db: number }>
    > = {
      none: [],
      four: [],
    };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['none', 'four'] : ['four', 'none'];
      for (const variant of order) {
        await setOpen(variant === 'four');
        const sequential = await run(SEQUENTIAL, 1);
        const before = await sampleCpu(probe);
        const loaded = await run(CONCURRENT, CONCURRENCY);
        const cpu = await cpuPerRequest(probe, before, CONCURRENT);
        if (sequential.unexpected + sequential.errors + loaded.unexpected + loaded.errors > 0)
          throw new Error(`${variant}: failed uploads`);
        results[variant].push({
          rps: loaded.rps,
          p50: loaded.p50,
          p99: loaded.p99,
          seqP50: sequential.p50,
          service: cpu.http,
          db: cpu.db,
        });
        console.log(
          `[r${round + 1}] ${variant === 'none' ? 'no open period ' : '4 open periods '} c${CONCURRENCY} ${loaded.rps.toFixed(0)} req/s ` +
            `p50 ${loaded.p50.toFixed(2)} p99 ${loaded.p99.toFixed(2)} ms; sequential p50 ${sequential.p50.toFixed(2)} ms; ` +
            `CPU an upload: service ${(cpu.http * 1000).toFixed(0)} µs, PostgreSQL ${(cpu.db * 1000).toFixed(0)} µs, driver ${(cpu.driver * 1000).toFixed(0)} µs; load average ${loadAverage()}`,
        );
      }
    }
    const rps = (variant: string) => mean(results[variant].map((r) => r.rps));
    const seq = (variant: string) => mean(results[variant].map((r) => r.seqP50));
    const cpuOf = (variant: string, part: 'service' | 'db') =>
      (mean(results[variant].map((r) => r[part])) * 1000).toFixed(0);
    console.log(
      `4 open ÷ none: throughput ${(rps('four') / rps('none')).toFixed(3)} × (${rps('four').toFixed(0)} / ${rps('none').toFixed(0)} req/s), ` +
        `sequential p50 ${seq('four').toFixed(2)} / ${seq('none').toFixed(2)} ms; CPU an upload (c${CONCURRENCY}), 4 open / none: ` +
        `service ${cpuOf('four', 'service')} / ${cpuOf('none', 'service')} µs, PostgreSQL ${cpuOf('four', 'db')} / ${cpuOf('none', 'db')} µs; load average ${loadAverage()}`,
    );
    // What the timed uploads wrote into the periods (a (period, player, chart) best written twice counts once).
    const written = await db.query<{ kind: string; rows: number }>(
      `SELECT p.kind, count(b.uid)::int AS rows FROM board_period p
         LEFT JOIN period_chart_best b ON b.period_id = p.id AND b.record_id > $2
        WHERE p.id = ANY($1) GROUP BY p.id, p.kind ORDER BY p.id`,
      [ids, lastWarmRecord],
    );
    const plays = await db.query<{ plays: number; counted: number; flagged: number }>(
      `SELECT count(*)::int AS plays, count(*) FILTER (WHERE pass AND cardinality(flags) = 0)::int AS counted,
              count(*) FILTER (WHERE cardinality(flags) > 0)::int AS flagged
         FROM play_record WHERE id > $1`,
      [lastWarmRecord],
    );
    console.log(
      `timed uploads (both variants): ${JSON.stringify(plays.rows[0])}; period bests written by those of "4 open": ` +
        written.rows.map((row) => `${row.kind} ${row.rows}`).join(', '),
    );
    if (plays.rows[0].flagged > 0) throw new Error('flagged plays: they are not counted, the period step did not run');
    await call(base, 'POST', '/server/logout', login.accessToken);
  } finally {
    await db.end();
    await stopChild(service);
    if (MODE === 'redis') await dropRedisPrefix(BENCH_REDIS_URL, prefix);
  }
}

runMain(main, stopAllChildren);
