/**
 * Realtime benchmark (issue 7): 200 game servers connected over WebSocket, on one instance
 * (in-process bus) and split across two instances (Redis pub/sub). Measures the time from an
 * admin ban (HTTP call issued) to `kick_player` received by the right game server, chat
 * fan-out latency (one chat line, every connected server receives it), and the live board
 * updates' fan-out (issue 45: every server opts in with `board_updates`; an upload that makes a
 * new top-10 best, from the upload's request to each server's `board_update` frame).
 *
 *   npm run build && npm run bench:realtime
 *   BENCH_SERVERS=1000 BENCH_KICKS=100 npm run bench:realtime   # issue 45's 1,000 game servers
 *
 * BENCH_FLOOD_SOCKETS=300 adds one more game server that opens that many sockets and sends chat on
 * every one it still has open (20 lines every 100 ms each) while the chat fan-out is measured: what
 * one server's sockets cost everyone else's delivery (WS_CONNECTIONS_PER_SERVER_SESSION, the chat
 * budget per server session). BENCH_SETUPS=single runs the one-instance setup only.
 *
 * Needs the build (dist/), PostgreSQL (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/rhythmc_bench_realtime;
 * the database is dropped and recreated) and Redis (BENCH_REDIS_URL, default redis://127.0.0.1:6379).
 * Everything runs on loopback, with bounded counts. Each measure also reports the event-loop delay
 * of every instance over it (p99, max; from the instance's own /metrics, reset by each scrape).
 */
import WebSocket from 'ws';
import { AdminApi, expectCall } from '../harness/api';
import { gameplayRecord } from '../harness/payloads';
import { recreateDatabase } from '../harness/database';
import { eventLoopDelays, formatEventLoop } from '../harness/event-loop';
import { BENCH_ADMIN_TOKEN, BENCH_REDIS_URL, benchDatabaseUrl, intFromEnv, loadAverage, runMain } from '../harness/env';
import { summarize } from '../harness/load';
import { Child, startServiceProcess, stopAllChildren, stopChild } from '../harness/process';

const DATABASE_URL = benchDatabaseUrl('rhythmc_bench_realtime');
const SERVERS = intFromEnv('BENCH_SERVERS', 200);
const KICKS = intFromEnv('BENCH_KICKS', 100);
const CHATS = intFromEnv('BENCH_CHATS', 50);
const FLOOD_SOCKETS = intFromEnv('BENCH_FLOOD_SOCKETS', 0);
const BOARD_UPDATES = intFromEnv('BENCH_BOARD_UPDATES', 20);
/** The chart the board-update uploads play. */
const BOARD_LEVEL = 1;
const SINGLE_ONLY = process.env.BENCH_SETUPS === 'single';

function summary(values: number[]): string {
  const s = summarize(values);
  return `p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, max ${s.max.toFixed(1)} ms (n=${s.count})`;
}

function startInstance(index: number, redis: boolean): Promise<Child> {
  return startServiceProcess({
    name: `instance ${index}`,
    databaseUrl: DATABASE_URL,
    redisUrl: redis ? BENCH_REDIS_URL : '',
    adminToken: BENCH_ADMIN_TOKEN,
    env: { REDIS_KEY_PREFIX: 'rhythmc-bench:' },
  });
}

interface Connected {
  serverID: number;
  socket: WebSocket;
  uid: number;
  url: string;
  serverToken: string;
  playerToken: string;
  listeners: Array<(frame: { event: string; data: any }) => void>;
}

async function scenario(instances: Child[], label: string): Promise<string[]> {
  const runTag = `${label.replace(/\W+/g, '')}${Date.now().toString(36)}`;
  const connected: Connected[] = [];
  for (let i = 0; i < SERVERS; i++) {
    const instance = instances[i % instances.length];
    const admin = new AdminApi(instance.url, BENCH_ADMIN_TOKEN);
    const created = await admin.createServer(`bench-${runTag}-${i}`);
    const session = await expectCall<{ accessToken: string; serverID: number }>(
      200,
      instance.url,
      'POST',
      '/server/login',
      created.bootstrapToken,
      { pluginVersion: 1, pluginSHA: 'bench' },
    );
    const player = await admin.createPlayer({ username: `b${i}` });
    const netToken = await admin.netToken(player.uid);
    const login = await expectCall<{ accessToken: string }>(
      200,
      instance.url,
      'POST',
      '/player/login',
      session.accessToken,
      {
        mode: 'TOKEN',
        version: 1,
        authToken: netToken,
      },
    );
    const socket = new WebSocket(`${instance.url.replace('http', 'ws')}/ws`, {
      headers: { Authorization: `Bearer ${session.accessToken}` },
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    const entry: Connected = {
      serverID: session.serverID,
      socket,
      uid: player.uid,
      url: instance.url,
      serverToken: session.accessToken,
      playerToken: login.accessToken,
      listeners: [],
    };
    socket.on('message', (raw: WebSocket.RawData) => {
      const frame = JSON.parse(Buffer.from(raw as Buffer).toString('utf8')) as { event: string; data: any };
      for (const listener of entry.listeners) listener(frame);
    });
    connected.push(entry);
  }

  const urls = instances.map((instance) => instance.url);
  const board = BOARD_UPDATES > 0 ? await boardUpdates(instances, connected) : null;
  // The scrape resets each instance's event-loop window: the set-up (logins, connections) stays out of it.
  await eventLoopDelays(urls);

  // Ban → kick: sequential, through the admin API of alternating instances.
  const kickLatencies: number[] = [];
  for (let i = 0; i < Math.min(KICKS, SERVERS); i++) {
    const target = connected[i];
    const received = new Promise<number>((resolve) => {
      target.listeners.push((frame) => {
        if (frame.event === 'kick_player' && frame.data.uid === target.uid) resolve(performance.now());
      });
    });
    const started = performance.now();
    await new AdminApi(instances[(i + 1) % instances.length].url, BENCH_ADMIN_TOKEN).ban(target.uid, 'bench');
    kickLatencies.push((await received) - started);
    target.listeners.length = 0;
  }
  const kickEventLoop = await eventLoopDelays(urls);
  const flood = FLOOD_SOCKETS > 0 ? await startFlood(instances[0], runTag) : null;
  if (flood) await eventLoopDelays(urls);

  // Chat fan-out: one line at a time from a server whose player is not banned.
  const deliveries: number[] = [];
  const allReceived: number[] = [];
  const senders = connected.slice(Math.min(KICKS, SERVERS));
  for (let m = 0; m < CHATS; m++) {
    const sender = senders[m % senders.length];
    const text = `bench-${m}`;
    let pending = connected.length;
    const sent = performance.now();
    const done = new Promise<void>((resolve) => {
      for (const entry of connected) {
        entry.listeners.push((frame) => {
          if (frame.event === 'chat' && frame.data.message === text) {
            deliveries.push(performance.now() - sent);
            if (--pending === 0) resolve();
          }
        });
      }
    });
    sender.socket.send(JSON.stringify({ event: 'chat', data: { uid: sender.uid, message: text } }));
    await done;
    allReceived.push(performance.now() - sent);
    for (const entry of connected) entry.listeners.length = 0;
  }
  const chatEventLoop = await eventLoopDelays(urls);
  const flooded = flood?.stop() ?? null;
  console.log(
    `${label}: event-loop delay per instance: ban → kick ${formatEventLoop(kickEventLoop)}; chat ${formatEventLoop(chatEventLoop)}`,
  );

  for (const entry of connected) entry.socket.terminate();
  if (flooded)
    console.log(
      `${label}: flood of ${FLOOD_SOCKETS} sockets: ${flooded.open} still open at the end, ${flooded.sent} lines sent, ` +
        `${flooded.refused} refused (RATE_LIMITED), ${flooded.closed} sockets closed by the service`,
    );
  // Both chat rows are one window, so they carry the same event-loop figure.
  return [
    ...(board
      ? [
          `| ${label} | board_update, each delivery | ${summary(board.deliveries)} | ${formatEventLoop(board.eventLoop)} |`,
          `| ${label} | board_update, until all ${SERVERS} servers have it | ${summary(board.all)} | ${formatEventLoop(board.eventLoop)} |`,
        ]
      : []),
    `| ${label} | ban → kick_player | ${summary(kickLatencies)} | ${formatEventLoop(kickEventLoop)} |`,
    `| ${label} | chat, each delivery | ${summary(deliveries)} | ${formatEventLoop(chatEventLoop)} |`,
    `| ${label} | chat, until all ${SERVERS} servers have it | ${summary(allReceived)} | ${formatEventLoop(chatEventLoop)} |`,
  ];
}

/** Board-update plays made so far, over both setups (they share the database). */
let boardPlays = 0;

/** A higher acc than every board-update play before it (of either setup), so each is the new first place. */
function boardAcc(): number {
  const step = 9.99 / (2 * BOARD_UPDATES);
  return Math.round((90 + step * boardPlays++) * 100) / 100;
}

/**
 * Live board updates' fan-out: every connected server opts in, then BOARD_UPDATES uploads, one at
 * a time, each a new best at the top of BOARD_LEVEL's board (so within the marked top 10), from
 * servers taking turns on every instance. Latency from the upload's request to each server's
 * `board_update` naming the chart (the instances flush marks every BOARD_FLUSH_MS, 250 ms).
 */
async function boardUpdates(
  instances: Child[],
  connected: Connected[],
): Promise<{ deliveries: number[]; all: number[]; eventLoop: Awaited<ReturnType<typeof eventLoopDelays>> }> {
  await new AdminApi(instances[0].url, BENCH_ADMIN_TOKEN).putCharts([
    { levelId: BOARD_LEVEL, name: 'bench board', difficultyConstant: 12, version: '1', active: true },
  ]);
  await Promise.all(
    connected.map(
      (entry) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`server ${entry.serverID}: no board_updates answer`)),
            10_000,
          );
          entry.listeners.push((frame) => {
            if (frame.event !== 'board_updates') return;
            clearTimeout(timer);
            if (frame.data?.enabled === true) resolve();
            else reject(new Error(`server ${entry.serverID}: board_updates answered ${JSON.stringify(frame.data)}`));
          });
          entry.socket.send(JSON.stringify({ event: 'board_updates', data: { enabled: true } }));
        }),
    ),
  );
  for (const entry of connected) entry.listeners.length = 0;
  await eventLoopDelays(instances.map((instance) => instance.url));
  const deliveries: number[] = [];
  const all: number[] = [];
  const time = Date.now() - 60_000;
  for (let n = 0; n < BOARD_UPDATES; n++) {
    // Each upload beats every one before it, of this setup and the one before: the chart's first place.
    const uploader = connected[(n * 7919) % connected.length];
    let pending = connected.length;
    let started = 0;
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`board update ${n}: ${pending} servers never got it`)), 30_000);
      for (const entry of connected) {
        entry.listeners.push((frame) => {
          if (frame.event !== 'board_update' || !(frame.data?.levelIds as number[] | undefined)?.includes(BOARD_LEVEL))
            return;
          entry.listeners.length = 0;
          deliveries.push(performance.now() - started);
          if (--pending === 0) {
            clearTimeout(timer);
            resolve();
          }
        });
      }
    });
    started = performance.now();
    await expectCall(
      200,
      uploader.url,
      'POST',
      '/player/upload',
      uploader.serverToken,
      gameplayRecord({
        uid: uploader.uid,
        accessToken: uploader.playerToken,
        serverID: uploader.serverID,
        levelID: BOARD_LEVEL,
        acc: boardAcc(),
        pass: true,
        time: time + n * 1_000,
      }),
    );
    await done;
    all.push(performance.now() - started);
    for (const entry of connected) entry.listeners.length = 0;
  }
  return { deliveries, all, eventLoop: await eventLoopDelays(instances.map((instance) => instance.url)) };
}

/** One more game server that opens FLOOD_SOCKETS sockets and sends chat on each one still open. */
async function startFlood(
  instance: Child,
  runTag: string,
): Promise<{ stop(): { open: number; sent: number; refused: number; closed: number } }> {
  const admin = new AdminApi(instance.url, BENCH_ADMIN_TOKEN);
  const created = await admin.createServer(`bench-${runTag}-flood`);
  const session = await expectCall<{ accessToken: string }>(
    200,
    instance.url,
    'POST',
    '/server/login',
    created.bootstrapToken,
    { pluginVersion: 1, pluginSHA: 'bench' },
  );
  const player = await admin.createPlayer({ username: `flood${runTag.slice(-6)}` });
  await expectCall(200, instance.url, 'POST', '/player/login', session.accessToken, {
    mode: 'TOKEN',
    version: 1,
    authToken: await admin.netToken(player.uid),
  });
  const counts = { sent: 0, refused: 0, closed: 0 };
  const sockets: WebSocket[] = [];
  for (let i = 0; i < FLOOD_SOCKETS; i++) {
    const socket = new WebSocket(`${instance.url.replace('http', 'ws')}/ws`, {
      headers: { Authorization: `Bearer ${session.accessToken}` },
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.on('message', (raw: WebSocket.RawData) => {
      if ((JSON.parse(Buffer.from(raw as Buffer).toString('utf8')) as { event: string }).event === 'error')
        counts.refused += 1;
    });
    socket.once('close', () => (counts.closed += 1));
    sockets.push(socket);
  }
  const timer = setInterval(() => {
    for (const socket of sockets) {
      if (socket.readyState !== WebSocket.OPEN) continue;
      for (let n = 0; n < 20; n++) {
        socket.send(JSON.stringify({ event: 'chat', data: { uid: player.uid, message: 'flood' } }));
        counts.sent += 1;
      }
    }
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      const open = sockets.filter((socket) => socket.readyState === WebSocket.OPEN).length;
      for (const socket of sockets) socket.terminate();
      return { open, ...counts };
    },
  };
}

async function main(): Promise<void> {
  const rows: string[] = [];
  await recreateDatabase(DATABASE_URL);
  const single = await startInstance(0, false);
  try {
    rows.push(...(await scenario([single], '1 instance, in-process bus')));
  } finally {
    await stopChild(single);
  }
  if (SINGLE_ONLY) return print(rows);
  const pair = [await startInstance(1, true), await startInstance(2, true)];
  try {
    rows.push(...(await scenario(pair, '2 instances, Redis')));
  } finally {
    await Promise.all(pair.map((instance) => stopChild(instance)));
  }
  print(rows);
}

function print(rows: string[]): void {
  console.log(
    `\n${SERVERS} game servers connected; ${BOARD_UPDATES} board updates; ${KICKS} bans; ${CHATS} chat lines` +
      `${FLOOD_SOCKETS > 0 ? `; one more server flooding chat on ${FLOOD_SOCKETS} sockets` : ''}; load average ${loadAverage()}\n`,
  );
  console.log('| setup | measure | latency | event-loop delay of each instance |');
  console.log('|---|---|---|---|');
  for (const row of rows) console.log(row);
}

runMain(main, stopAllChildren);
