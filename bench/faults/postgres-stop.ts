/**
 * PostgreSQL stopped and started under upload load, at network scale (docs/benchmarks.md
 * "PostgreSQL stopped under load"): the built service, one instance without Redis (the in-process
 * rank index), on a PostgreSQL cluster of this benchmark (Debian's initdb/pg_ctl on its own port
 * and data dir under bench/.out/fault-postgres, kept between runs; the shared server on 5432 is not
 * touched) holding the upload generator's data (FAULT_PLAYERS ranked players, 10 plays each:
 * generated on the first run, about 15–30 minutes at 1,000,000).
 *
 * Offered load: UPLOAD_RATE uploads a second (open loop) by SESSIONS logged-in players spread over
 * the rank order. After WARM_SECONDS: `pg_ctl stop -m fast`, STOP_SECONDS later `pg_ctl start`,
 * then AFTER_SECONDS more of load. Reported: what the plugin saw (answers by status and error,
 * before, during and after), the time from the start of the database to the first acknowledged
 * upload (and from pg_ctl's return), until the rank index answered again, the rank index's repairs
 * and full loads in the service log, upload latency per phase, and acknowledged uploads lost (every
 * one answered 200 is looked up in play_record afterwards).
 *
 *   npm run build && npm run bench:fault:postgres-stop
 *   FAULT_PLAYERS=100000 STOP_SECONDS=10 UPLOAD_RATE=100 npm run bench:fault:postgres-stop
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { PrivatePostgres } from '../../test/support/private-postgres';
import { AdminApi, call, expectCall } from '../harness/api';
import { databaseExists, withClient } from '../harness/database';
import { BENCH_ADMIN_TOKEN, intFromEnv, loadAverage, OUT_DIR, runMain } from '../harness/env';
import { counts } from '../harness/generate';
import { percentile, USER_AGENT } from '../harness/load';
import { gameplayRecord, randomPlay } from '../harness/payloads';
import { Child, startServiceProcess, stopAllChildren, stopChild } from '../harness/process';
import { generateUploadData } from '../upload/generate';

const PLAYERS = intFromEnv('FAULT_PLAYERS', 1_000_000);
const SESSIONS = intFromEnv('SESSIONS', 200);
const UPLOAD_RATE = intFromEnv('UPLOAD_RATE', 50);
const WARM_SECONDS = intFromEnv('WARM_SECONDS', 20);
const STOP_SECONDS = intFromEnv('STOP_SECONDS', 10);
const AFTER_SECONDS = intFromEnv('AFTER_SECONDS', 60);
/** Requests in flight at most; past it an offered upload is counted as not sent (the driver's limit, not the service's). */
const MAX_IN_FLIGHT = 500;
const ROOT_DIR = join(OUT_DIR, 'fault-postgres');
const DATA_DIR = join(OUT_DIR, 'fault-postgres-service');
const LOG = 'fault-postgres-service.log';
const DATABASE = 'rhythmc_bench_fault';

interface Sent {
  uid: number;
  time: number;
  sentAt: number;
  answeredAt: number;
  status: number;
  /** The error code of a non-200 answer, or the transport error. */
  error: string | null;
  retryAfter: string | null;
}

const agent = new Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT });

function post(
  url: string,
  path: string,
  token: string,
  body: string,
): Promise<{ status: number; text: string; retryAfter: string | null }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      new URL(path, url),
      {
        agent,
        method: 'POST',
        headers: {
          'User-Agent': USER_AGENT,
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString('utf8'),
            retryAfter: res.headers['retry-after'] ?? null,
          }),
        );
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The cluster with the generated data (generated when missing or of another size). */
async function clusterWithData(): Promise<{ cluster: PrivatePostgres; url: string }> {
  const cluster = await PrivatePostgres.create({
    root: ROOT_DIR,
    settings: {
      shared_buffers: '256MB',
      max_wal_size: '2GB',
      checkpoint_timeout: '30min',
      maintenance_work_mem: '512MB',
    },
  });
  const url = cluster.url(DATABASE);
  const have = (await databaseExists(url)) ? await withClient(url, (client) => counts(client)).catch(() => null) : null;
  if (have === null || have.players !== PLAYERS) {
    process.stdout.write(`generating ${PLAYERS} ranked players into ${url} (dropped and recreated)\n`);
    await generateUploadData(url, PLAYERS, PLAYERS, (line) => process.stdout.write(`  ${line}\n`));
  } else {
    process.stdout.write(`data: ${JSON.stringify(have)}\n`);
  }
  return { cluster, url };
}

async function setUpSessions(
  base: string,
): Promise<{ token: string; serverID: number; players: Array<{ uid: number; accessToken: string }> }> {
  const admin = new AdminApi(base, BENCH_ADMIN_TOKEN);
  const created = await admin.createServer(`fault-${randomBytes(4).toString('hex')}`);
  const login = await expectCall<{ accessToken: string; serverID: number }>(
    200,
    base,
    'POST',
    '/server/login',
    created.bootstrapToken,
    {
      pluginVersion: 1,
      pluginSHA: 'bench',
    },
  );
  const players: Array<{ uid: number; accessToken: string }> = [];
  // Spread over the rank order (uids 1..PLAYERS are the ranked players); a player still logged in
  // by an interrupted run (409) is passed over for the next uid.
  for (let i = 0; i < SESSIONS; i++) {
    for (let uid = 1 + Math.floor(((i + 0.5) * PLAYERS) / SESSIONS); ; uid++) {
      const player = await call<{ accessToken: string }>(base, 'POST', '/player/login', login.accessToken, {
        mode: 'TOKEN',
        version: 1,
        authToken: await admin.netToken(uid),
      });
      if (player.status === 409) continue;
      if (player.status !== 200) throw new Error(`POST /player/login: ${player.status} ${player.text.slice(0, 200)}`);
      players.push({ uid, accessToken: player.body.accessToken });
      break;
    }
  }
  return { token: login.accessToken, serverID: login.serverID, players };
}

async function indexReady(base: string): Promise<boolean> {
  const text = await fetch(`${base}/metrics`)
    .then((response) => response.text())
    .catch(() => '');
  return /^rhythmc_rank_index_ready\{mode="memory"\} 1$/m.test(text);
}

function logLinesSince(offset: number): string[] {
  return readFileSync(join(OUT_DIR, LOG), 'utf8').slice(offset).split('\n');
}

const logSize = () => {
  try {
    return readFileSync(join(OUT_DIR, LOG), 'utf8').length;
  } catch {
    return 0;
  }
};

function tally(sent: Sent[]): Record<string, number> {
  const result: Record<string, number> = {};
  for (const one of sent) {
    const key =
      one.status === 200
        ? '200'
        : `${one.status} ${one.error ?? ''}${one.retryAfter ? ` (Retry-After ${one.retryAfter})` : ''}`;
    result[key] = (result[key] ?? 0) + 1;
  }
  return result;
}

function latencies(sent: Sent[]): { count: number; p50: number; p99: number; max: number } {
  const sorted = sent.map((one) => one.answeredAt - one.sentAt).sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN };
}

async function main(): Promise<void> {
  const { cluster, url } = await clusterWithData();
  let service: Child | null = null;
  try {
    const logOffset = logSize();
    service = await startServiceProcess({
      databaseUrl: url,
      adminToken: BENCH_ADMIN_TOKEN,
      source: 'dist',
      log: LOG,
      env: {
        DATA_DIR,
        LOG_LEVEL: 'info',
        SERVER_TOKEN_TTL_SECONDS: '86400',
        PLAYER_TOKEN_TTL_SECONDS: '86400',
      },
    });
    const base = service.url;
    process.stdout.write(`service ready in ${service.startedMs} ms\n`);
    const { token, serverID, players } = await setUpSessions(base);

    const sent: Sent[] = [];
    const acknowledged: Array<{ uid: number; time: number }> = [];
    let notSent = 0;
    let inFlight = 0;
    let clock = Date.now() - 3_600_000;
    let running = true;
    const offer = () => {
      if (inFlight >= MAX_IN_FLIGHT) {
        notSent++;
        return;
      }
      const player = players[Math.floor(Math.random() * players.length)];
      const time = (clock += 1);
      const body = JSON.stringify(gameplayRecord({ ...player, serverID, ...randomPlay(Math.random), time }));
      const sentAt = Date.now();
      inFlight++;
      post(base, '/player/upload', token, body).then(
        (answer) => {
          inFlight--;
          let error: string | null = null;
          if (answer.status !== 200) {
            try {
              error = (JSON.parse(answer.text) as { error?: string }).error ?? null;
            } catch {
              error = answer.text.slice(0, 40);
            }
          } else acknowledged.push({ uid: player.uid, time });
          sent.push({
            uid: player.uid,
            time,
            sentAt,
            answeredAt: Date.now(),
            status: answer.status,
            error,
            retryAfter: answer.retryAfter,
          });
        },
        (failure: Error) => {
          inFlight--;
          sent.push({
            uid: player.uid,
            time,
            sentAt,
            answeredAt: Date.now(),
            status: 0,
            error: failure.message,
            retryAfter: null,
          });
        },
      );
    };
    const interval = 1_000 / UPLOAD_RATE;
    const loadStarted = Date.now();
    const load = (async () => {
      for (let n = 0; running; n++) {
        const due = loadStarted + n * interval;
        const wait = due - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        offer();
      }
    })();

    await new Promise((resolve) => setTimeout(resolve, WARM_SECONDS * 1_000));
    const faultLogOffset = logSize();
    const loadBefore = loadAverage();
    const stopping = Date.now();
    await cluster.stop('fast');
    const stopped = Date.now();
    await new Promise((resolve) => setTimeout(resolve, STOP_SECONDS * 1_000 - (Date.now() - stopping)));
    const starting = Date.now();
    await cluster.start();
    const started = Date.now();
    let indexBackAt: number | null = null;
    const watchIndex = (async () => {
      while (running && indexBackAt === null) {
        if (await indexReady(base)) indexBackAt = Date.now();
        else await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, AFTER_SECONDS * 1_000));
    running = false;
    await load;
    await watchIndex;
    while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 100));

    // Every acknowledged upload must be stored.
    const lost = await withClient(url, async (client) => {
      const { rows } = await client.query<{ missing: number }>(
        `SELECT count(*)::int AS missing FROM unnest($1::bigint[], $2::bigint[]) AS a(uid, time_ms)
          WHERE NOT EXISTS (SELECT 1 FROM play_record p WHERE p.uid = a.uid AND p.time_ms = a.time_ms)`,
        [acknowledged.map((one) => one.uid), acknowledged.map((one) => one.time)],
      );
      return rows[0].missing;
    });
    const firstAfter = sent
      .filter((one) => one.status === 200 && one.answeredAt >= starting)
      .reduce((min, one) => Math.min(min, one.answeredAt), Infinity);
    const lines = logLinesSince(faultLogOffset);
    const phase = (from: number, to: number) => sent.filter((one) => one.sentAt >= from && one.sentAt < to);
    const before = phase(loadStarted + 5_000, stopping);
    const during = phase(stopping, starting);
    const after10 = phase(starting, starting + 10_000);
    const afterRest = phase(starting + 10_000, Infinity);
    const result = {
      players: PLAYERS,
      sessions: SESSIONS,
      uploadRate: UPLOAD_RATE,
      stopSeconds: STOP_SECONDS,
      stopTookMs: stopped - stopping,
      startTookMs: started - starting,
      firstAcknowledgedAfterStartMs: firstAfter - starting,
      firstAcknowledgedAfterPgCtlReturnedMs: firstAfter - started,
      indexAnsweringAfterStartMs: indexBackAt === null ? null : indexBackAt - starting,
      acknowledged: acknowledged.length,
      acknowledgedLost: lost,
      notSentByTheDriver: notSent,
      seen: { before: tally(before), during: tally(during), first10s: tally(after10), rest: tally(afterRest) },
      latencyMs: {
        before: latencies(before),
        during: latencies(during),
        first10s: latencies(after10),
        rest: latencies(afterRest),
      },
      fullLoads: lines.filter((line) => line.includes('Rank index loaded from the tables')).length,
      repairs: lines
        .filter((line) => /Rank index repaired/.test(line))
        .map((line) => /Rank index repaired[^"]*/.exec(line)?.[0]),
      loadAverage: [loadBefore, loadAverage()],
      serviceLogSince: logOffset,
    };
    // The players' sessions end with the server's: the next run logs them in again.
    await call(base, 'POST', '/server/logout', token);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(join(OUT_DIR, `fault-postgres-stop-${Date.now()}.json`), JSON.stringify(result, null, 2));
  } finally {
    await stopChild(service);
    agent.destroy();
    await cluster.destroy({ keep: true });
  }
}

runMain(main, stopAllChildren);
