/**
 * Webhooks: the receiver down for OUTAGE_SECONDS under uploads, then back (issue 45: "0 events
 * lost, 0 delivered twice with different ids"). One built service on PostgreSQL, every webhook
 * setting at its default (retries from 10 s doubling, concurrency 8, poll 500 ms) but
 * WEBHOOK_ALLOWED_NETWORKS=127.0.0.0/8; one webhook subscribed to every event (personal bests
 * included) pointing at a receiver in this process. Uploads run open loop at RATE a second for
 * BEFORE + OUTAGE + AFTER seconds; the receiver's port is closed (connections refused) for the
 * middle OUTAGE seconds. Then the uploads stop and the run waits for the outbox to drain.
 *
 *   npm run build && npm run bench:webhooks:outage
 *
 * Checked at the end, against the outbox itself: every row delivered (none pending or given up),
 * every row's delivery id received, no delivery id received for an event under another delivery id
 * (the receiver's (event id → delivery ids) map), and how many ids arrived more than once (a retry
 * after an attempt whose 2xx was lost; the same id, which a receiver dedupes).
 *
 * Environment: BENCH_DATABASE_URL (dropped and recreated; its name must contain "bench"), RATE
 * (10), BEFORE (30), OUTAGE_SECONDS (300), AFTER (30), PLAYERS (50), CHARTS (20), DRAIN_SECONDS
 * (900: the longest wait for the outbox to empty), SERVICE_SOURCE=src (no build needed). Writes bench/.out/webhooks-outage.json.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { AdminApi, expectCall } from '../harness/api';
import { ensureDatabase, withClient } from '../harness/database';
import { BENCH_ADMIN_TOKEN, benchDatabaseUrl, intFromEnv, loadAverage, OUT_DIR, runMain } from '../harness/env';
import { openLoop } from '../harness/load';
import { gameplayRecord } from '../harness/payloads';
import { startServiceProcess, stopAllChildren, stopChild } from '../harness/process';

const DATABASE_URL = benchDatabaseUrl('rhythmc_bench_webhooks_outage');
const RATE = intFromEnv('RATE', 10);
const BEFORE = intFromEnv('BEFORE', 30);
const OUTAGE = intFromEnv('OUTAGE_SECONDS', 300);
const AFTER = intFromEnv('AFTER', 30);
const PLAYERS = intFromEnv('PLAYERS', 50);
const CHART_COUNT = intFromEnv('CHARTS', 20);
const DRAIN_SECONDS = intFromEnv('DRAIN_SECONDS', 900);
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  await ensureDatabase(DATABASE_URL, true);
  /** Every arrival by delivery id, and the delivery ids seen for each event id. */
  const arrivals = new Map<string, number>();
  const idsOfEvent = new Map<string, Set<string>>();
  let receiving = true;
  let refusedWhileDown = 0;
  const receiver: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (!receiving) {
        refusedWhileDown++;
        response.destroy();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { id: string; eventId: string };
      arrivals.set(body.id, (arrivals.get(body.id) ?? 0) + 1);
      const ids = idsOfEvent.get(body.eventId) ?? new Set<string>();
      ids.add(body.id);
      idsOfEvent.set(body.eventId, ids);
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  const stopReceiver = async () => {
    receiving = false;
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  };
  const startReceiver = async () => {
    await new Promise<void>((resolve) => receiver.listen(port, '127.0.0.1', resolve));
    receiving = true;
  };

  const service = await startServiceProcess({
    name: 'service',
    databaseUrl: DATABASE_URL,
    adminToken: BENCH_ADMIN_TOKEN,
    log: 'webhooks-outage-service.log',
    // SERVICE_SOURCE=src: run src/ through ts-node instead of the build.
    ...(process.env.SERVICE_SOURCE === 'src' ? { source: 'src' as const } : {}),
    env: {
      SERVER_TOKEN_TTL_SECONDS: '86400',
      PLAYER_TOKEN_TTL_SECONDS: '86400',
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
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
      const player = await admin.createPlayer({ username: `wo_${i}_${randomBytes(2).toString('hex')}` });
      const netToken = await admin.netToken(player.uid);
      const session = await expectCall<{ accessToken: string }>(200, base, 'POST', '/player/login', login.accessToken, {
        mode: 'TOKEN',
        version: 1,
        authToken: netToken,
      });
      sessions.push({ uid: player.uid, accessToken: session.accessToken });
    }
    await expectCall<{ id: number }>(201, base, 'POST', '/admin/webhooks', BENCH_ADMIN_TOKEN, {
      name: 'outage',
      url: `http://127.0.0.1:${port}/hook`,
      events: EVENTS,
    });

    const total = BEFORE + OUTAGE + AFTER;
    let clock = Date.now() - 3_000_000;
    let next = 0;
    const body = () => {
      const session = sessions[next++ % sessions.length];
      const acc = Math.min(100, 80 + (next / (RATE * total)) * 20 + Math.random() * 2);
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
    const started = Date.now();
    const timeline: Array<{ at: number; what: string; load: number }> = [];
    const mark = (what: string) => {
      timeline.push({ at: Math.round((Date.now() - started) / 100) / 10, what, load: loadAverage() });
      console.log(JSON.stringify(timeline[timeline.length - 1]));
    };
    mark('uploads start, receiver up');
    const outage = (async () => {
      await sleep(BEFORE * 1_000);
      await stopReceiver();
      mark('receiver down');
      await sleep(OUTAGE * 1_000);
      await startReceiver();
      mark('receiver back');
    })();
    const uploads = await openLoop({
      baseUrl: base,
      rate: RATE,
      seconds: total,
      request: () => ({
        method: 'POST',
        path: '/player/upload',
        headers: { Authorization: `Bearer ${login.accessToken}` },
        body: body(),
      }),
    });
    await outage;
    mark('uploads end');
    const backAt = timeline.find((entry) => entry.what === 'receiver back')?.at ?? 0;

    const outbox = () =>
      withClient(DATABASE_URL, async (client) => {
        const rows = await client.query<{ state: string; n: string }>(
          'SELECT state, count(*) AS n FROM webhook_delivery GROUP BY state',
        );
        return Object.fromEntries(rows.rows.map((row) => [row.state, Number(row.n)]));
      });
    let states = await outbox();
    const drainStarted = Date.now();
    while ((states.pending ?? 0) > 0 && Date.now() - drainStarted < DRAIN_SECONDS * 1_000) {
      await sleep(2_000);
      states = await outbox();
    }
    mark('outbox drained');
    await sleep(2_000);
    const rows = await withClient(DATABASE_URL, async (client) => {
      const result = await client.query<{ id: string; state: string; attempts: number }>(
        'SELECT id, state, attempts FROM webhook_delivery',
      );
      return result.rows;
    });
    const lost = rows.filter((row) => !arrivals.has(row.id)).length;
    const notDelivered = rows.filter((row) => row.state !== 'delivered').length;
    const unknownArrivals = [...arrivals.keys()].filter((id) => !rows.some((row) => row.id === id)).length;
    const eventsUnderTwoIds = [...idsOfEvent.values()].filter((ids) => ids.size > 1).length;
    const sameIdTwice = [...arrivals.values()].filter((count) => count > 1).length;
    const retried = rows.filter((row) => row.attempts > 1).length;
    const maxAttempts = Math.max(0, ...rows.map((row) => row.attempts));
    const summary = {
      rate: RATE,
      before: BEFORE,
      outageSeconds: OUTAGE,
      after: AFTER,
      uploads: {
        requests: uploads.requests,
        non200: uploads.unexpected + uploads.errors,
        p50: uploads.p50,
        p99: uploads.p99,
      },
      timeline,
      outbox: { rows: rows.length, states },
      received: { distinctIds: arrivals.size, refusedWhileDown },
      lost,
      notDelivered,
      unknownArrivals,
      eventsUnderTwoIds,
      sameIdTwice,
      retried,
      maxAttempts,
      caughtUpSecondsAfterBack: Math.round(((timeline.at(-1)?.at ?? 0) - backAt) * 10) / 10,
      loadAverage: loadAverage(),
    };
    console.log(JSON.stringify(summary, null, 2));
    mkdirSync(OUT_DIR, { recursive: true });
    writeFileSync(join(OUT_DIR, 'webhooks-outage.json'), JSON.stringify(summary, null, 2));
  } finally {
    await stopChild(service);
    receiver.closeAllConnections();
    receiver.close();
  }
}

runMain(main, stopAllChildren);
