/**
 * Retention benchmark (issue 46 item 2), one run against one service on PostgreSQL: upload latency
 * (open loop, RATE uploads a second for SECONDS) without a purge, while the failed-plays purge
 * deletes a large backlog, and without again. The generator inserts PLAYS old failed plays
 * (40 days) in SQL before the rounds. The purge runs the service's own batches (the `doomed` SQL
 * of src/retention/retention.map.ts, BATCH rows per transaction with its PURGE_BATCH_SETTINGS and
 * the 20 ms pause of RetentionService) from this process's connection, so the round starts it at a
 * known moment; the database's work is the service's.
 *
 *   npm run build && npm run bench:retention
 *
 * Environment: BENCH_DATABASE_URL (dropped and recreated; its name must contain "bench"), PLAYS
 * (300000), RATE (50), SECONDS (15), PLAYERS (100), CHARTS (50), BATCH (2000). Prints the rows and
 * writes bench/.out/retention.json.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdminApi, expectCall } from '../harness/api';
import { ensureDatabase, withClient } from '../harness/database';
import { BENCH_ADMIN_TOKEN, benchDatabaseUrl, intFromEnv, loadAverage, OUT_DIR, runMain } from '../harness/env';
import { openLoop } from '../harness/load';
import { gameplayRecord } from '../harness/payloads';
import { startServiceProcess, stopAllChildren, stopChild } from '../harness/process';
import { PURGE_BATCH_SETTINGS, purgeBatchSql, RETENTION_PURGES } from '../../src/retention/retention.map';

const DATABASE_URL = benchDatabaseUrl('rhythmc_bench_retention');
const PLAYS = intFromEnv('PLAYS', 300_000);
const RATE = intFromEnv('RATE', 50);
const SECONDS = intFromEnv('SECONDS', 15);
const PLAYERS = intFromEnv('PLAYERS', 100);
const CHART_COUNT = intFromEnv('CHARTS', 50);
const BATCH = intFromEnv('BATCH', 2_000);

const purge = RETENTION_PURGES.find((p) => p.table === 'play_record')!;

/** The purge as RetentionService runs it: batches until one is not full. */
async function runPurge(): Promise<{ deleted: number; batches: number; ms: number; longestBatchMs: number }> {
  return withClient(DATABASE_URL, async (client) => {
    const started = Date.now();
    let deleted = 0;
    let batches = 0;
    let longestBatchMs = 0;
    for (;;) {
      const batchStarted = Date.now();
      await client.query('BEGIN');
      await client.query(PURGE_BATCH_SETTINGS);
      const { rows } = await client.query<{ deleted: number }>(purgeBatchSql(purge), [
        new Date(Date.now() - 30 * 86_400_000),
        BATCH,
      ]);
      await client.query('COMMIT');
      longestBatchMs = Math.max(longestBatchMs, Date.now() - batchStarted);
      batches++;
      deleted += rows[0].deleted;
      if (rows[0].deleted < BATCH) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { deleted, batches, ms: Date.now() - started, longestBatchMs };
  });
}

async function main(): Promise<void> {
  await ensureDatabase(DATABASE_URL, true);
  const service = await startServiceProcess({
    name: 'service',
    databaseUrl: DATABASE_URL,
    adminToken: BENCH_ADMIN_TOKEN,
    log: 'retention-service.log',
    env: { SERVER_TOKEN_TTL_SECONDS: '86400', PLAYER_TOKEN_TTL_SECONDS: '86400', LOG_LEVEL: 'warn' },
  });
  try {
    const base = service.url;
    const admin = new AdminApi(base, BENCH_ADMIN_TOKEN);
    await admin.putCharts(
      Array.from({ length: CHART_COUNT }, (_, i) => ({
        levelId: i + 1,
        name: `Chart ${i + 1}`,
        difficultyConstant: 8 + (i % 8),
        version: '1',
        active: true,
      })),
    );
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
    for (let i = 0; i < PLAYERS; i++) {
      const player = await admin.createPlayer({ username: `rt_${i}_${randomBytes(2).toString('hex')}` });
      const session = await expectCall<{ accessToken: string }>(200, base, 'POST', '/player/login', login.accessToken, {
        mode: 'TOKEN',
        version: 1,
        authToken: await admin.netToken(player.uid),
      });
      sessions.push({ uid: player.uid, accessToken: session.accessToken });
    }

    let clock = Date.now() - 3_000_000;
    let next = 0;
    const body = () => {
      const session = sessions[next++ % sessions.length];
      return JSON.stringify(
        gameplayRecord({
          ...session,
          serverID: login.serverID,
          levelID: 1 + Math.floor(Math.random() * CHART_COUNT),
          acc: Math.round((80 + Math.random() * 20) * 100) / 100,
          pass: Math.random() < 0.8,
          time: (clock += 100),
        }),
      );
    };
    // One upload per player first: the template row of the generator, and warm statements.
    const warm = await openLoop({
      baseUrl: base,
      rate: RATE,
      seconds: Math.max(3, Math.ceil(PLAYERS / RATE) + 1),
      request: () => ({
        method: 'POST',
        path: '/player/upload',
        headers: { Authorization: `Bearer ${login.accessToken}` },
        body: body(),
      }),
    });
    console.log(JSON.stringify({ label: 'warm-up', requests: warm.requests, p50: warm.p50, p99: warm.p99 }));

    const generated = Date.now();
    await withClient(DATABASE_URL, async (client) => {
      const { rows } = await client.query<{ c: string }>(
        `SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position) AS c FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = 'play_record'
            AND column_name NOT IN ('id', 'time_ms', 'pass', 'received_at', 'flags', 'voided_at', 'approved_at')`,
      );
      const columns = rows[0].c;
      const prefixed = columns
        .split(', ')
        .map((c) => `r.${c}`)
        .join(', ');
      // Old failed plays spread over the players (copies of their uploads, times unique per player).
      await client.query(
        `INSERT INTO play_record (${columns}, time_ms, pass, received_at, flags)
         SELECT ${prefixed}, r.time_ms - 1000000 - g, false, now() - interval '40 days' - make_interval(secs => g), '{}'
           FROM (SELECT DISTINCT ON (uid) * FROM play_record ORDER BY uid, id) r
          CROSS JOIN generate_series(1, ${Math.ceil(PLAYS / PLAYERS)}) g`,
      );
      await client.query('ANALYZE play_record');
    });
    const total = await withClient(DATABASE_URL, async (client) =>
      Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM play_record')).rows[0].n),
    );
    console.log(JSON.stringify({ label: 'generated', playRecords: total, seconds: (Date.now() - generated) / 1000 }));

    const round = async (label: string, during?: () => Promise<unknown>) => {
      const load = loadAverage();
      const sideTask = during?.();
      const result = await openLoop({
        baseUrl: base,
        rate: RATE,
        seconds: SECONDS,
        request: () => ({
          method: 'POST',
          path: '/player/upload',
          headers: { Authorization: `Bearer ${login.accessToken}` },
          body: body(),
        }),
      });
      const side = await sideTask;
      const row = {
        label,
        requests: result.requests,
        non200: result.unexpected + result.errors,
        p50: result.p50,
        p99: result.p99,
        max: result.max,
        loadBefore: load,
        loadAfter: loadAverage(),
        purge: side ?? null,
      };
      console.log(JSON.stringify(row));
      return row;
    };
    const rows = [
      await round('no purge'),
      await round('purging failed plays', runPurge),
      await round('no purge (after)'),
    ];
    mkdirSync(OUT_DIR, { recursive: true });
    writeFileSync(
      join(OUT_DIR, 'retention.json'),
      JSON.stringify({ plays: PLAYS, rate: RATE, seconds: SECONDS, batch: BATCH, rows }, null, 2),
    );
  } finally {
    await stopChild(service);
  }
}

runMain(main, stopAllChildren);
