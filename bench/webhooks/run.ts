/**
 * Webhooks benchmark (issue 45), one run against one service on PostgreSQL:
 *   - upload latency with no webhook against 3 webhooks subscribed to every event, in alternating
 *     rounds of the same run (open loop, RATE uploads a second for SECONDS each): the webhooks are
 *     switched on and off between rounds (PATCH enabled);
 *   - the service's event-loop delay over each round (its /metrics, rhythmc_event_loop_delay_seconds) and the
 *     CPU its main thread and the whole process used (/proc, in cores): what the deliveries cost the uploads' thread;
 *   - delivery after commit: for every delivery the receiver (receiver.ts, a process of its own at
 *     nice RECEIVER_NICE, default 19) gets in the latency phase, its
 *     arrival time minus the event's createdAt (the database's now() of the uploading transaction,
 *     a little before its commit), p50 / p95 / max; and how long the rounds' backlog took to drain.
 *   - per variant, the median of the rounds' p99 and the pooled p99 (all rounds' uploads of the variant
 *     together, `pooledP99`).
 *
 *   npm run build && npm run bench:webhooks
 *
 * Environment: BENCH_DATABASE_URL (dropped and recreated; its name must contain "bench"), RATE
 * (100), SECONDS (15), ROUNDS (3 pairs), PLAYERS (200), CHARTS (50), LATENCY_RATE (10 uploads a
 * second) and LATENCY_SECONDS (20) of the delivery-latency phase, which starts once the outbox is
 * empty (the rounds queue deliveries faster than one instance sends them). TRIGGERS_ONLY=1: nothing is
 * sent before a minute after the start (WEBHOOK_POLL_MS=60000), so that the rounds (keep them short:
 * ROUNDS=1 SECONDS=12) measure the triggers and outbox rows alone; no delivery phase. DRAIN=1 with it: then the
 * first poll works through the rounds' backlog, timed (deliveries a second: the claim / send / record loop's rate). BUILD_ROOT: another
 * checkout whose dist/ to start (to compare two builds in the same period with the same bench). Prints the
 * results and writes bench/.out/webhooks.json.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { AdminApi, expectCall } from '../harness/api';
import { ensureDatabase } from '../harness/database';
import { eventLoopDelay } from '../harness/event-loop';
import { BENCH_ADMIN_TOKEN, benchDatabaseUrl, intFromEnv, loadAverage, OUT_DIR, ROOT, runMain } from '../harness/env';
import { openLoop, percentile } from '../harness/load';
import { gameplayRecord } from '../harness/payloads';
import {
  cpuOf,
  freePort,
  memoryOf,
  mib,
  postgresCoresSince,
  postgresCpu,
  spawnReady,
  startServiceProcess,
  stopAllChildren,
  stopChild,
} from '../harness/process';

const DATABASE_URL = benchDatabaseUrl('rhythmc_bench_webhooks');
const RATE = intFromEnv('RATE', 100);
const SECONDS = intFromEnv('SECONDS', 15);
const ROUNDS = intFromEnv('ROUNDS', 3);
const PLAYERS = intFromEnv('PLAYERS', 200);
const CHART_COUNT = intFromEnv('CHARTS', 50);
const LATENCY_RATE = intFromEnv('LATENCY_RATE', 10);
const LATENCY_SECONDS = intFromEnv('LATENCY_SECONDS', 20);
const TRIGGERS_ONLY = process.env.TRIGGERS_ONLY === '1';
/** With TRIGGERS_ONLY=1: then wait for the first poll and time how fast the loop works through the rounds' backlog. */
const DRAIN = process.env.DRAIN === '1';
const BUILD_ROOT = process.env.BUILD_ROOT || undefined;
/**
 * SLOW_RECEIVER_SECONDS > 0: the delivery-latency phase adds a fourth webhook subscribed to every
 * event whose receiver answers after that many seconds (longer than WEBHOOK_TIMEOUT_SECONDS, 10 s:
 * each of its attempts holds a slot until the timeout); the latencies are still the three others'.
 */
const SLOW_RECEIVER_SECONDS = intFromEnv('SLOW_RECEIVER_SECONDS', 0);
/** The receiver process's nice value (receiver.ts): 19 by default, 0 to let it compete as an equal. */
const RECEIVER_NICE = intFromEnv('RECEIVER_NICE', 19);
const EVENTS = [
  'chart.first_place',
  'player.atp_top',
  'player.personal_best',
  'player.banned',
  'player.unbanned',
  'play.flagged',
  'play.voided',
  'server.offline',
];

interface Delivery {
  type: string;
  phase: string;
  latencyMs: number;
}

async function main(): Promise<void> {
  await ensureDatabase(DATABASE_URL, true);
  // The receiver runs in a process of its own at a low priority (receiver.ts says why).
  const receiverPort = await freePort();
  const receiver = await spawnReady({
    name: 'receiver',
    args: ['-r', 'ts-node/register/transpile-only', join(ROOT, 'bench/webhooks/receiver.ts')],
    env: { PORT: String(receiverPort), SLOW_MS: String(SLOW_RECEIVER_SECONDS * 1_000) },
    port: receiverPort,
    readyPath: '/ready',
  });
  if (RECEIVER_NICE !== 0) setPriority(receiver.pid, RECEIVER_NICE);
  const receiverUrl = `${receiver.url}/hook`;
  const setPhase = (name: string) => fetch(`${receiver.url}/_bench/phase/${name}`, { method: 'POST' });
  const report = async () =>
    (await (await fetch(`${receiver.url}/_bench/report`)).json()) as {
      deliveries: Delivery[];
      duplicates: number;
      slowArrivals: number;
    };

  const service = await startServiceProcess({
    name: 'service',
    databaseUrl: DATABASE_URL,
    adminToken: BENCH_ADMIN_TOKEN,
    log: 'webhooks-service.log',
    buildRoot: BUILD_ROOT,
    env: {
      SERVER_TOKEN_TTL_SECONDS: '86400',
      PLAYER_TOKEN_TTL_SECONDS: '86400',
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
      // TRIGGERS_ONLY=1: the first look for due deliveries comes a minute after the start, after
      // the rounds, so they measure the outbox writes without the sending.
      ...(TRIGGERS_ONLY ? { WEBHOOK_POLL_MS: '60000' } : {}),
    },
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
      const player = await admin.createPlayer({ username: `wh_${i}_${randomBytes(2).toString('hex')}` });
      const netToken = await admin.netToken(player.uid);
      const session = await expectCall<{ accessToken: string }>(200, base, 'POST', '/player/login', login.accessToken, {
        mode: 'TOKEN',
        version: 1,
        authToken: netToken,
      });
      sessions.push({ uid: player.uid, accessToken: session.accessToken });
    }
    const webhooks: number[] = [];
    for (let i = 0; i < 3; i++) {
      const webhook = await expectCall<{ id: number }>(201, base, 'POST', '/admin/webhooks', BENCH_ADMIN_TOKEN, {
        name: `bench ${i}`,
        url: receiverUrl,
        events: EVENTS,
        format: i === 2 ? 'discord' : 'json',
      });
      webhooks.push(webhook.id);
    }
    const setEnabled = async (enabled: boolean) => {
      for (const id of webhooks)
        await expectCall(200, base, 'PATCH', `/admin/webhooks/${id}`, BENCH_ADMIN_TOKEN, { enabled });
    };

    let clock = Date.now() - 3_000_000;
    let next = 0;
    const body = () => {
      const session = sessions[next++ % sessions.length];
      // Rising accuracies: most uploads are a personal best, many a first place, some enter the top 10.
      const acc = Math.min(100, 80 + (next / (RATE * SECONDS * ROUNDS * 2)) * 20 + Math.random() * 2);
      return JSON.stringify(
        gameplayRecord({
          ...session,
          serverID: login.serverID,
          levelID: 1 + Math.floor(Math.random() * CHART_COUNT),
          acc: Math.round(acc * 100) / 100,
          pass: true,
          time: (clock += 100),
        }),
      );
    };
    /** Every timed upload's latency by variant, over all rounds: the pooled p99 (below). */
    const pooled: Record<'none' | '3 webhooks', number[]> = { none: [], '3 webhooks': [] };
    const round = async (label: string) => {
      const load = loadAverage();
      await eventLoopDelay(base); // starts the event-loop window of this round
      const cpuBefore = cpuOf(service.pid);
      const postgresBefore = postgresCpu();
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
      if (label === 'none' || label === '3 webhooks') pooled[label].push(...result.latencies);
      const row = {
        label,
        requests: result.requests,
        non200: result.unexpected + result.errors,
        p50: result.p50,
        p99: result.p99,
        max: result.max,
        // The uploads' event loop over the round: how late a 2 ms timer ran (the work queued on it).
        eventLoop: await eventLoopDelay(base),
        // CPU the service used over the round, in cores: the main thread (the uploads' event loop) and the whole process.
        cpu: (() => {
          const cpu = cpuOf(service.pid);
          const cores = (seconds: number) => Math.round((seconds / SECONDS) * 1000) / 1000;
          return {
            mainThread: cores(cpu.mainThread - cpuBefore.mainThread),
            process: cores(cpu.process - cpuBefore.process),
            // Every PostgreSQL process: the uploads' statements, and with webhooks the triggers' rows and the deliveries' claims and records.
            postgres: postgresCoresSince(postgresBefore, SECONDS),
          };
        })(),
        loadBefore: load,
        loadAfter: loadAverage(),
      };
      console.log(JSON.stringify(row));
      return row;
    };

    await setEnabled(false);
    await round('warm-up (no webhook)');
    const rows: Array<Awaited<ReturnType<typeof round>>> = [];
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate which goes first, so a drift of the machine's load does not favour one side.
      for (const on of r % 2 === 0 ? [false, true] : [true, false]) {
        await setEnabled(on);
        rows.push(await round(on ? '3 webhooks' : 'none'));
      }
    }
    /** Deliveries still pending, over every webhook (the admin list). */
    const pendingNow = async () =>
      (
        await expectCall<{ items: Array<{ pending: number }> }>(200, base, 'GET', '/admin/webhooks', BENCH_ADMIN_TOKEN)
      ).items.reduce((sum, item) => sum + item.pending, 0);
    /** Polls the outbox every 100 ms: from the first delivery taken off the backlog to none left, and the rate. */
    const drainRate = async () => {
      const backlog = await pendingNow();
      let firstTaken: number | null = null;
      let left = backlog;
      const waitStarted = Date.now();
      while (left > 0 && Date.now() - waitStarted < 240_000) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        left = await pendingNow();
        if (firstTaken === null && left < backlog) firstTaken = Date.now();
      }
      const seconds = firstTaken === null ? null : (Date.now() - firstTaken) / 1000;
      return { backlog, left, seconds, perSecond: seconds ? Math.round(backlog / seconds) : null };
    };
    if (TRIGGERS_ONLY) {
      const sent = (await report()).deliveries.length;
      const queued = await expectCall<{ items: Array<{ pending: number }> }>(
        200,
        base,
        'GET',
        '/admin/webhooks',
        BENCH_ADMIN_TOKEN,
      );
      const summary = {
        triggersOnly: true,
        rate: RATE,
        seconds: SECONDS,
        rounds: rows,
        sentDuringRounds: sent,
        queued: queued.items.map((item) => item.pending),
        loadAverage: loadAverage(),
        // The rounds may end on a "none" round (webhooks off), whose rows no claim takes: on for the drain.
        ...(DRAIN ? { drain: await setEnabled(true).then(drainRate) } : {}),
      };
      console.log(JSON.stringify(summary, null, 2));
      mkdirSync(OUT_DIR, { recursive: true });
      writeFileSync(join(OUT_DIR, 'webhooks-triggers-only.json'), JSON.stringify(summary, null, 2));
      return;
    }
    await setEnabled(true);
    // Let the outbox drain, then read what is left.
    const drainStarted = Date.now();
    let pending = -1;
    while (Date.now() - drainStarted < 120_000) {
      pending = await pendingNow();
      if (pending === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const drained = {
      pending,
      seconds: (Date.now() - drainStarted) / 1000,
      deliveries: (await report()).deliveries.length,
    };
    // Delivery after commit: LATENCY_RATE uploads a second for LATENCY_SECONDS, the outbox empty at the start.
    if (SLOW_RECEIVER_SECONDS > 0)
      await expectCall(201, base, 'POST', '/admin/webhooks', BENCH_ADMIN_TOKEN, {
        name: 'bench slow',
        url: `${receiver.url}/slow`,
        events: EVENTS,
      });
    await setPhase('latency');
    const latencyRound = await (async () => {
      const load = loadAverage();
      const result = await openLoop({
        baseUrl: base,
        rate: LATENCY_RATE,
        seconds: LATENCY_SECONDS,
        request: () => ({
          method: 'POST',
          path: '/player/upload',
          headers: { Authorization: `Bearer ${login.accessToken}` },
          body: body(),
        }),
      });
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      return { requests: result.requests, p99: result.p99, loadBefore: load, loadAfter: loadAverage() };
    })();
    const { deliveries, duplicates, slowArrivals } = await report();
    const timed = deliveries.filter((delivery) => delivery.phase === 'latency');
    const latencies = timed.map((delivery) => delivery.latencyMs).sort((a, b) => a - b);
    const byType: Record<string, number> = {};
    for (const delivery of deliveries) byType[delivery.type] = (byType[delivery.type] ?? 0) + 1;
    const summary = {
      build: BUILD_ROOT ?? 'this checkout',
      rate: RATE,
      seconds: SECONDS,
      rounds: rows,
      none: { p99: rows.filter((row) => row.label === 'none').map((row) => row.p99) },
      webhooks: { p99: rows.filter((row) => row.label === '3 webhooks').map((row) => row.p99) },
      // The p99 of all rounds' uploads of a variant together (ROUNDS × RATE × SECONDS each): a round's
      // p99 is its 15th slowest of 1,500 and moves by milliseconds from round to round.
      pooledP99: {
        none: percentile(
          pooled.none.sort((a, b) => a - b),
          99,
        ),
        webhooks: percentile(
          pooled['3 webhooks'].sort((a, b) => a - b),
          99,
        ),
      },
      mainThreadCores: {
        none: rows.filter((row) => row.label === 'none').map((row) => row.cpu.mainThread),
        webhooks: rows.filter((row) => row.label === '3 webhooks').map((row) => row.cpu.mainThread),
      },
      memoryMiB: (({ rss, peakRss }) => ({ rss: mib(rss), peak: mib(peakRss) }))(memoryOf(service.pid)),
      eventLoopP99: {
        none: rows.filter((row) => row.label === 'none').map((row) => row.eventLoop.p99Ms),
        webhooks: rows.filter((row) => row.label === '3 webhooks').map((row) => row.eventLoop.p99Ms),
      },
      drained,
      byType,
      duplicates,
      delivery: {
        rate: LATENCY_RATE,
        seconds: LATENCY_SECONDS,
        uploads: latencyRound,
        // A fourth webhook answering after this many seconds beside the three timed (0: none).
        slowReceiver: { seconds: SLOW_RECEIVER_SECONDS, attempts: slowArrivals },
        count: timed.length,
        p50: percentile(latencies, 50),
        p95: percentile(latencies, 95),
        p99: percentile(latencies, 99),
        max: latencies[latencies.length - 1] ?? null,
      },
      loadAverage: loadAverage(),
    };
    console.log(JSON.stringify(summary, null, 2));
    mkdirSync(OUT_DIR, { recursive: true });
    writeFileSync(join(OUT_DIR, 'webhooks.json'), JSON.stringify(summary, null, 2));
  } finally {
    await stopChild(service);
    await stopChild(receiver);
  }
}

runMain(main, stopAllChildren);
