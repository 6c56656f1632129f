/**
 * Realtime benchmark (issue 7): 200 game servers connected over WebSocket, on one instance
 * (in-process bus) and split across two instances (Redis pub/sub). Measures the time from an
 * admin ban (HTTP call issued) to `kick_player` received by the right game server, and chat
 * fan-out latency (one chat line, every connected server receives it).
 *
 *   npm run build && npm run bench:realtime
 *
 * Needs PostgreSQL (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/rhythmc_bench_realtime;
 * the database is dropped and recreated) and Redis (BENCH_REDIS_URL, default redis://127.0.0.1:6379).
 * Everything runs on loopback, with bounded counts.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import WebSocket from 'ws';

const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/rhythmc_bench_realtime';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SERVERS = Number(process.env.BENCH_SERVERS ?? 200);
const KICKS = Number(process.env.BENCH_KICKS ?? 100);
const CHATS = Number(process.env.BENCH_CHATS ?? 50);
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const BASE_PORT = 38400;

interface Instance {
  url: string;
  process: ChildProcess;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms, max ${sorted[sorted.length - 1].toFixed(1)} ms (n=${sorted.length})`;
}

async function recreateDatabase(): Promise<void> {
  const url = new URL(DATABASE_URL);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!/bench/.test(name)) throw new Error(`Refusing to recreate "${name}": the name must contain "bench"`);
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
}

async function startInstance(index: number, redis: boolean): Promise<Instance> {
  const port = BASE_PORT + index;
  const child = spawn(process.execPath, [join(__dirname, '..', '..', 'dist', 'src', 'main.js')], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL,
      REDIS_URL: redis ? REDIS_URL : '',
      REDIS_KEY_PREFIX: 'rhythmc-bench:',
      ADMIN_TOKEN,
      THROTTLE_LOGIN_LIMIT: '1000000',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i++) {
    try {
      if ((await fetch(`${url}/health/ready`)).ok) return { url, process: child };
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  child.kill();
  throw new Error(`instance ${index} did not start`);
}

async function call(url: string, method: string, path: string, token: string, body?: unknown): Promise<any> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

interface Connected {
  serverID: number;
  socket: WebSocket;
  uid: number;
  listeners: Array<(frame: { event: string; data: any }) => void>;
}

async function scenario(instances: Instance[], label: string): Promise<string[]> {
  const runTag = `${label.replace(/\W+/g, '')}${Date.now().toString(36)}`;
  const connected: Connected[] = [];
  for (let i = 0; i < SERVERS; i++) {
    const instance = instances[i % instances.length];
    const created = await call(instance.url, 'POST', '/admin/servers', ADMIN_TOKEN, { name: `bench-${runTag}-${i}`, country: 'DE' });
    const session = await call(instance.url, 'POST', '/server/login', created.bootstrapToken, { pluginVersion: 1, pluginSHA: 'bench' });
    const player = await call(instance.url, 'POST', '/admin/players', ADMIN_TOKEN, { username: `b${i}` });
    const { netToken } = await call(instance.url, 'POST', `/admin/players/${player.uid}/net-token`, ADMIN_TOKEN);
    await call(instance.url, 'POST', '/player/login', session.accessToken, { mode: 'TOKEN', version: 1, authToken: netToken });
    const socket = new WebSocket(`${instance.url.replace('http', 'ws')}/ws`, { headers: { Authorization: `Bearer ${session.accessToken}` } });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    const entry: Connected = { serverID: session.serverID, socket, uid: player.uid, listeners: [] };
    socket.on('message', (raw: WebSocket.RawData) => {
      const frame = JSON.parse(Buffer.from(raw as Buffer).toString('utf8')) as { event: string; data: any };
      for (const listener of entry.listeners) listener(frame);
    });
    connected.push(entry);
  }

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
    await call(instances[(i + 1) % instances.length].url, 'POST', `/admin/players/${target.uid}/ban`, ADMIN_TOKEN, { reason: 'bench' });
    kickLatencies.push((await received) - started);
    target.listeners.length = 0;
  }

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

  for (const entry of connected) entry.socket.terminate();
  return [
    `| ${label} | ban → kick_player | ${summary(kickLatencies)} |`,
    `| ${label} | chat, each delivery | ${summary(deliveries)} |`,
    `| ${label} | chat, until all ${SERVERS} servers have it | ${summary(allReceived)} |`,
  ];
}

async function main(): Promise<void> {
  const rows: string[] = [];
  await recreateDatabase();
  const single = await startInstance(0, false);
  try {
    rows.push(...(await scenario([single], '1 instance, in-process bus')));
  } finally {
    single.process.kill('SIGTERM');
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const pair = [await startInstance(1, true), await startInstance(2, true)];
  try {
    rows.push(...(await scenario(pair, '2 instances, Redis')));
  } finally {
    for (const instance of pair) instance.process.kill('SIGTERM');
  }
  console.log(`\n${SERVERS} game servers connected; ${KICKS} bans; ${CHATS} chat lines\n`);
  console.log('| setup | measure | latency |');
  console.log('|---|---|---|');
  for (const row of rows) console.log(row);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
