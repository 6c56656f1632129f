/**
 * Closing a period of 1M ranked players, and archived against live board reads (issue #44: the
 * close ≤ 10 s with ranks identical to the last live read; archived reads' p50 within 1.2 × of
 * live). One run, real PostgreSQL, the service started as a child process.
 *
 *   npm run bench:periods:close        # PLAYERS=1000000 by default
 *
 * Data (bench/periods/generate.ts, in SQL on a migrated database): two open seasons A and B with
 * the same rows, PLAYERS players ranked on the ATP board, bests on charts 1..5, 1 % banned, ties.
 * Then:
 *   1. the last live read of A: every board whole, by the service's own statements
 *      (PeriodRepository.top over a pg client), and over HTTP (`GET /admin/boards/…?period=<A>`):
 *      the ATP board's and chart 1's top 1,000 (limit=100, then around windows of k=25) and the
 *      ranks of SAMPLE random players through `around` (k=0);
 *   2. live read latency of A over HTTP, four shapes (ATP top 10, ATP around a player k=5, chart 1
 *      top 10, chart 1 around k=5), READS one at a time, then LOADED over CONCURRENCY connections;
 *   3. A closed by the admin route `POST /admin/seasons/{A}/close` (the close, then archive and
 *      grant, in two transactions as the route runs them): its time over HTTP;
 *   4. A's archive against the live read: every board whole (the archive statements), and the same
 *      HTTP reads as in 1: mismatches counted;
 *   5. archived read latency of A: the same route, shapes and players as in 2;
 *   6. B closed by the period job's path (PeriodRepository.close, then PeriodJobService.freeze, in
 *      their own transactions as the job runs them), every statement timed: close, archive (ATP,
 *      charts), grant; B's archive compared with the live read (B holds A's rows).
 * EXPLAIN=1 prints EXPLAIN ANALYZE of the two archive statements on B first (rolled back).
 * GENERATE_ONLY=1 stops after the data. Knobs: PLAYERS, SAMPLE (10000; the first LIVE_SAMPLE (100)
 * are read live too: a live window's rank is a COUNT of the rows ahead, seconds at 1M), READS (1000)
 * and LOADED (3000) of the top-10 shapes, AROUND_READS (50) and AROUND_LOADED (64) of the around
 * shapes, CONCURRENCY (16), SKIP_GENERATE=1
 * (reuse the database: only before a run that closed nothing), BENCH_DATABASE_URL.
 */
import 'reflect-metadata';
import { Agent } from 'node:http';
import { Client } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/database-options';
import { PreparedQueries } from '../../src/database/prepared-queries';
import type { ReadQueries } from '../../src/database/read-queries';
import type { AppConfig } from '../../src/config/app-config';
import type { CatalogService } from '../../src/catalog/catalog.service';
import type { Clock } from '../../src/common/clock';
import type { EventBus } from '../../src/common/events/events';
import type { TransactionService } from '../../src/database/transaction.service';
import { CatalogRepository } from '../../src/catalog/catalog.repository';
import {
  ARCHIVE_ATP_SQL,
  ARCHIVE_CHARTS_SQL,
  PeriodBoard,
  PeriodRepository,
} from '../../src/ranking/periods/period.repository';
import { PeriodJobService } from '../../src/ranking/periods/period-job.service';
import { expectCall } from '../harness/api';
import { recreateDatabase, withClient } from '../harness/database';
import {
  BENCH_ADMIN_TOKEN,
  benchDatabaseUrl,
  fmt,
  intFromEnv,
  loadAverage,
  runMain,
  secondsSince,
} from '../harness/env';
import { closedLoop, LoadRequest, send } from '../harness/load';
import { startServiceProcess, stopAllChildren, stopChild } from '../harness/process';
import { generatePeriods, PERIOD_CHARTS } from './generate';

const URL = benchDatabaseUrl('rhythmc_bench_periods_close');
const PLAYERS = intFromEnv('PLAYERS', 1_000_000);
const SAMPLE = intFromEnv('SAMPLE', 10_000);
/** Of the sample, how many are read live too: a live window's rank is a COUNT of the rows ahead (seconds at 1M). */
const LIVE_SAMPLE = intFromEnv('LIVE_SAMPLE', 100);
const AROUND_READS = intFromEnv('AROUND_READS', 50);
const AROUND_LOADED = intFromEnv('AROUND_LOADED', 64);
const READS = intFromEnv('READS', 1_000);
const LOADED = intFromEnv('LOADED', 3_000);
const CONCURRENCY = intFromEnv('CONCURRENCY', 16);
const TOP = 1_000;

const load = () => `load ${loadAverage().toFixed(2)}`;
const auth = { Authorization: `Bearer ${BENCH_ADMIN_TOKEN}` };

/** A board read whole: the uid at each rank (index + 1) and its value columns joined as one string. */
interface WholeBoard {
  uids: string[];
  values: string[];
}

/** Waits (at most 60 s) until no other backend of the database runs a statement; the ms waited. */
async function untilIdle(client: Client): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < 60_000) {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()`,
    );
    if (rows[0].n === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return performance.now() - started;
}

/** How long each archive's parts (the ATP and chart blocks, written at once on their own connections) took. */
const partsMs: number[] = [];

/**
 * The repository's statement runner over one pg client (named prepared statements, as the service
 * runs them); the archive's parts through the service's own PreparedQueries on `dataSource` (their
 * connections import the freezing transaction's snapshot), timed as a whole.
 */
function runnerOf(client: Client, dataSource: DataSource): PreparedQueries & ReadQueries {
  const prepared = new PreparedQueries(dataSource, true);
  return {
    run: async <T>(name: string, text: string, params: unknown[]) =>
      (await client.query({ name, text, values: params })).rows as T[],
    runLongInParts: async (...args: Parameters<PreparedQueries['runLongInParts']>) => {
      const started = performance.now();
      await prepared.runLongInParts(...args);
      partsMs.push(performance.now() - started);
    },
  } as unknown as PreparedQueries & ReadQueries;
}

const boards = (): Array<{ label: string; board: PeriodBoard }> => [
  { label: 'ATP', board: { board: 'atp' } },
  ...PERIOD_CHARTS.map((c) => ({
    label: `chart ${c.levelId}`,
    board: { board: 'chart' as const, levelId: c.levelId },
  })),
];

const valueOf = (row: { atp?: string; acc?: number; rating?: number }) =>
  row.atp !== undefined ? String(row.atp) : `${row.acc}/${row.rating}`;

/** Every board of `period` whole, live or archived, by the service's statements (PeriodRepository.top). */
async function readWhole(repo: PeriodRepository, period: string, archived: boolean): Promise<Map<string, WholeBoard>> {
  const out = new Map<string, WholeBoard>();
  for (const { label, board } of boards()) {
    const rows = await repo.top(period, board, PLAYERS + 1, archived);
    const whole: WholeBoard = { uids: [], values: [] };
    rows.forEach((row, i) => {
      // Archived rows carry their rank; live rows are ranked by position (PeriodService.top).
      if (archived && Number(row.rank) !== i + 1) whole.uids.push(`rank ${String(row.rank)} at ${i + 1}`);
      else whole.uids.push(String(row.uid));
      whole.values.push(valueOf(row));
    });
    out.set(label, whole);
  }
  return out;
}

function compareWhole(
  live: Map<string, WholeBoard>,
  archive: Map<string, WholeBoard>,
): { rows: number; mismatches: number; detail: string[] } {
  let rows = 0;
  let mismatches = 0;
  const detail: string[] = [];
  for (const [label, l] of live) {
    const a = archive.get(label) ?? { uids: [], values: [] };
    const n = Math.max(l.uids.length, a.uids.length);
    let m = 0;
    for (let i = 0; i < n; i++) if (l.uids[i] !== a.uids[i] || l.values[i] !== a.values[i]) m++;
    rows += l.uids.length;
    mismatches += m;
    detail.push(
      `${label} ${fmt(l.uids.length)} rows${m ? `, ${fmt(m)} MISMATCHED` : ''}${l.uids.length !== a.uids.length ? ` (archive ${fmt(a.uids.length)})` : ''}`,
    );
  }
  return { rows, mismatches, detail };
}

interface Entry {
  rank: number;
  uid: number;
}
interface BoardAnswer {
  rank?: number | null;
  entries: Entry[];
}

async function get(agent: Agent, base: string, path: string): Promise<BoardAnswer> {
  const answer = await send(agent, base, { method: 'GET', path, headers: auth });
  if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status} ${answer.text.slice(0, 300)}`);
  return JSON.parse(answer.text) as BoardAnswer;
}

/** What the HTTP reads answered: rank → uid of a board's top TOP, and the rank of each sampled player. */
interface HttpRead {
  top: Map<string, Map<number, number>>;
  sample: Map<string, number | null>;
}

/** `limit=100`, then around windows of k=25 centred every 51 ranks, up to TOP; `around` k=0 for the sample (4 at a time). */
async function readHttp(
  base: string,
  period: string,
  live: Map<string, WholeBoard>,
  sample: string[],
): Promise<HttpRead> {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const top = new Map<string, Map<number, number>>();
  for (const [label, path] of [
    ['ATP', '/admin/boards/atp'],
    ['chart 1', '/admin/boards/charts/1'],
  ]) {
    const ranks = new Map<number, number>();
    const add = (answer: BoardAnswer) => answer.entries.forEach((e) => ranks.set(e.rank, e.uid));
    add(await get(agent, base, `${path}?period=${period}&limit=100`));
    const board = live.get(label) as WholeBoard;
    for (let centre = 126; centre - 25 <= TOP && centre <= board.uids.length; centre += 51)
      add(await get(agent, base, `${path}?period=${period}&around=${board.uids[centre - 1]}&k=25`));
    top.set(label, ranks);
  }
  const ranks = new Map<string, number | null>();
  let next = 0;
  const worker = async () => {
    while (next < sample.length) {
      const uid = sample[next++];
      const answer = await get(agent, base, `/admin/boards/atp?period=${period}&around=${uid}&k=0`);
      ranks.set(uid, answer.rank ?? null);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  agent.destroy();
  return { top, sample: ranks };
}

/** Mismatches of an HTTP read against the whole live read (rank i ↔ uids[i-1]; banned players: no rank). */
function compareHttp(
  read: HttpRead,
  live: Map<string, WholeBoard>,
  liveRank: Map<string, number>,
): { checked: number; mismatches: number } {
  let checked = 0;
  let mismatches = 0;
  for (const [label, ranks] of read.top) {
    const uids = (live.get(label) as WholeBoard).uids;
    for (let rank = 1; rank <= Math.min(TOP, uids.length); rank++) {
      checked++;
      if (String(ranks.get(rank)) !== uids[rank - 1]) mismatches++;
    }
  }
  for (const [uid, rank] of read.sample) {
    checked++;
    if ((liveRank.get(uid) ?? null) !== rank) mismatches++;
  }
  return { checked, mismatches };
}

interface Shape {
  name: string;
  path: (period: string) => string;
  /** Requests one at a time, then over CONCURRENCY connections. */
  reads: number;
  loaded: number;
}

/** Latency of the four board shapes over HTTP: one at a time, then CONCURRENCY connections. */
async function latencies(
  base: string,
  period: string,
  shapes: Shape[],
): Promise<Map<string, { seq: number[]; loaded: number[] }>> {
  const out = new Map<string, { seq: number[]; loaded: number[] }>();
  for (const shape of shapes) {
    const run = async (connections: number, requests: number) => {
      const r = await closedLoop({
        baseUrl: base,
        connections,
        requests,
        request: (): LoadRequest => ({ method: 'GET', path: shape.path(period), headers: auth }),
      });
      // A live window at 1M is a COUNT of seconds: over many connections the gate of windows counted in SQL answers 503.
      if (r.unexpected + r.errors > 0)
        console.log(
          `  ${shape.name} c${connections}: ${r.unexpected} of ${r.requests} not 200 (503: the windows' gate, or the pool's acquire timeout), ${r.errors} transport errors`,
        );
      return [r.p50, r.p99, r.rps];
    };
    await run(2, Math.min(20, shape.reads)); // warm-up: the statement prepared on the pool's connections
    const seq = await run(1, shape.reads);
    const loaded = await run(CONCURRENCY, shape.loaded);
    out.set(shape.name, { seq, loaded });
  }
  return out;
}

/** An EntityManager whose query() times each statement, labelled by what it does. */
function timed(manager: EntityManager, times: Array<[string, number]>): EntityManager {
  const label = (sql: string) =>
    /pg_advisory_xact_lock/.test(sql)
      ? 'close: period lock'
      : /SET closed_at/.test(sql)
        ? 'close: mark closed'
        : /SET archived_at/.test(sql)
          ? 'archive: mark archived'
          : /INSERT INTO period_atp_uid_block/.test(sql)
            ? 'archive: ATP board'
            : /INSERT INTO period_chart_uid_block/.test(sql)
              ? 'archive: chart boards'
              : /FROM period_atp_rank_block/.test(sql)
                ? 'grant: archived top N'
                : /player_collection/.test(sql)
                  ? 'grant: collection rows'
                  : /realtime_outbox/.test(sql)
                    ? 'grant: frames for online players'
                    : sql.slice(0, 40);
  return new Proxy(manager, {
    get(target, prop, receiver) {
      if (prop !== 'query') return Reflect.get(target, prop, receiver) as unknown;
      return async (sql: string, params?: unknown[]) => {
        const t0 = performance.now();
        const result: unknown = await target.query(sql, params);
        times.push([label(sql), performance.now() - t0]);
        return result;
      };
    },
  });
}

const pct = (values: number[]) => `p50 ${fmt(values[0], 2)} p99 ${fmt(values[1], 2)} ms`;

runMain(async () => {
  const started = Date.now();
  let a: string;
  let b: string;
  if (process.env.SKIP_GENERATE === '1') {
    const ids = await withClient(URL, (c) =>
      c.query<{ id: string }>(
        `SELECT id FROM board_period WHERE slug IN ('bench-close-a', 'bench-close-b') AND closed_at IS NULL ORDER BY slug`,
      ),
    );
    if (ids.rows.length !== 2) throw new Error('SKIP_GENERATE=1: seasons A and B must both be open (generate again)');
    [a, b] = ids.rows.map((row) => row.id);
  } else {
    await recreateDatabase(URL);
    const generated = await withClient(URL, (c) => generatePeriods(c, PLAYERS, (line) => console.log(`  ${line}`)));
    [a, b] = [generated.a, generated.b];
    console.log(
      `generated ${fmt(PLAYERS)} players, seasons ${a} and ${b} each ${fmt(generated.ranked)} ranked, ${fmt(generated.bests)} period bests: ${secondsSince(started)} s — ${load()}`,
    );
  }

  if (process.env.GENERATE_ONLY === '1') return;
  const service = await startServiceProcess({
    name: 'service',
    source: process.env.SERVICE_SOURCE === 'dist' ? 'dist' : 'src',
    databaseUrl: URL,
    adminToken: BENCH_ADMIN_TOKEN,
    log: 'periods-close-service.log',
    env: { PERIOD_JOB_INTERVAL_SECONDS: '3600', LOG_LEVEL: 'info' },
  });
  const client = new Client({ connectionString: URL });
  await client.connect();
  const dataSource = await new DataSource(buildDataSourceOptions({ url: URL, embedded: false })).initialize();
  try {
    const base = service.url;
    const repo = new PeriodRepository(runnerOf(client, dataSource), runnerOf(client, dataSource));

    // 1. The last live read of A.
    let t = Date.now();
    const live = await readWhole(repo, a, false);
    const liveRank = new Map<string, number>();
    (live.get('ATP') as WholeBoard).uids.forEach((uid, i) => liveRank.set(uid, i + 1));
    console.log(
      `live read whole (service statements): ${[...live].map(([l, w]) => `${l} ${fmt(w.uids.length)}`).join(', ')} in ${secondsSince(t)} s — ${load()}`,
    );
    // JOB_ONLY=1: from the live read straight to 6 (the statements' profile and the job's path).
    if (process.env.JOB_ONLY !== '1') {
      const sample = Array.from({ length: SAMPLE }, () => String(1 + Math.floor(Math.random() * PLAYERS)));
      t = Date.now();
      const liveHttp = await readHttp(base, a, live, sample.slice(0, LIVE_SAMPLE));
      const liveHttpCheck = compareHttp(liveHttp, live, liveRank);
      console.log(
        `live read over HTTP: top ${TOP} of ATP and chart 1, ${fmt(Math.min(LIVE_SAMPLE, SAMPLE))} sampled ATP ranks (around, k=0) in ${secondsSince(t)} s: ` +
          `${fmt(liveHttpCheck.mismatches)} of ${fmt(liveHttpCheck.checked)} differ from the whole live read — ${load()}`,
      );

      // 2. Live latency (the players of the around shapes: one fixed list, the same after the close).
      const aroundAtp = Array.from(
        { length: 500 },
        () => (live.get('ATP') as WholeBoard).uids[Math.floor(Math.random() * liveRank.size)],
      );
      const chart1 = live.get('chart 1') as WholeBoard;
      const aroundChart = Array.from(
        { length: 500 },
        () => chart1.uids[Math.floor(Math.random() * chart1.uids.length)],
      );
      let ia = 0;
      let ic = 0;
      const shapes: Shape[] = [
        { name: 'ATP top 10', path: (p) => `/admin/boards/atp?period=${p}&limit=10`, reads: READS, loaded: LOADED },
        {
          name: 'ATP around k=5',
          path: (p) => `/admin/boards/atp?period=${p}&around=${aroundAtp[ia++ % aroundAtp.length]}&k=5`,
          reads: AROUND_READS,
          loaded: AROUND_LOADED,
        },
        {
          name: 'chart 1 top 10',
          path: (p) => `/admin/boards/charts/1?period=${p}&limit=10`,
          reads: READS,
          loaded: LOADED,
        },
        {
          name: 'chart 1 around k=5',
          path: (p) => `/admin/boards/charts/1?period=${p}&around=${aroundChart[ic++ % aroundChart.length]}&k=5`,
          reads: AROUND_READS,
          loaded: AROUND_LOADED,
        },
      ];
      const liveLatency = await latencies(base, a, shapes);
      console.log(`live latency measured — ${load()}`);

      // 3. A closed by the admin route, once the database is idle: the c16 live windows above leave
      // statements of seconds running after their clients gave up (503), which the close would share
      // the cores with (12.8 s against 9.2 s in two runs of the same build).
      const idleMs = await untilIdle(client);
      console.log(`database idle after ${fmt(idleMs)} ms — ${load()}`);
      const loadBefore = loadAverage();
      t = Date.now();
      const t0 = performance.now();
      const closed = await expectCall<{ granted: { uids: string[] } | null }>(
        200,
        base,
        'POST',
        `/admin/seasons/${a}/close`,
        BENCH_ADMIN_TOKEN,
      );
      const closeMs = performance.now() - t0;
      console.log(
        `CLOSE A (POST /admin/seasons/${a}/close: the close, then archive + grant: two transactions): ${fmt(closeMs / 1000, 2)} s ` +
          `(goal ≤ 10 s), granted ${closed.granted?.uids.length ?? 0} — load ${loadBefore.toFixed(2)} before, ${loadAverage().toFixed(2)} after`,
      );

      // 4. A's archive against the live read.
      t = Date.now();
      const archivedA = await readWhole(repo, a, true);
      const wholeA = compareWhole(live, archivedA);
      console.log(
        `archive A vs live read (whole boards): ${fmt(wholeA.mismatches)} mismatches of ${fmt(wholeA.rows)} rows [${wholeA.detail.join('; ')}] in ${secondsSince(t)} s`,
      );
      archivedA.clear();
      t = Date.now();
      const archivedHttp = await readHttp(base, a, live, sample);
      const archivedHttpCheck = compareHttp(archivedHttp, live, liveRank);
      console.log(
        `archived read over HTTP (same requests): ${fmt(archivedHttpCheck.mismatches)} of ${fmt(archivedHttpCheck.checked)} differ from the live read, in ${secondsSince(t)} s — ${load()}`,
      );

      // 5. Archived latency, then the ratios.
      [ia, ic] = [0, 0]; // the same players in the same order as the live run
      const archivedLatency = await latencies(base, a, shapes);
      for (const shape of shapes) {
        const l = liveLatency.get(shape.name) as { seq: number[]; loaded: number[] };
        const x = archivedLatency.get(shape.name) as { seq: number[]; loaded: number[] };
        console.log(
          `${shape.name.padEnd(19)} one at a time: live ${pct(l.seq)}, archived ${pct(x.seq)}, p50 ratio ${fmt(x.seq[0] / l.seq[0], 2)} × | ` +
            `c${CONCURRENCY}: live ${pct(l.loaded)} ${fmt(l.loaded[2])} req/s, archived ${pct(x.loaded)} ${fmt(x.loaded[2])} req/s, p50 ratio ${fmt(x.loaded[0] / l.loaded[0], 2)} ×`,
        );
      }
      console.log(`archived latency measured — ${load()}`);
    }

    // 6. B by the job's path, every statement timed.
    if (process.env.EXPLAIN === '1') {
      await client.query('BEGIN');
      for (const sql of [ARCHIVE_ATP_SQL, ARCHIVE_CHARTS_SQL]) {
        const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, [b]);
        console.log(plan.rows.map((row) => `  ${row['QUERY PLAN']}`).join('\n'));
      }
      await client.query('ROLLBACK');
    }
    await client.query('UPDATE board_period SET ends_at = now() WHERE id = $1', [b]);
    const config = { serverTokenTtlSeconds: 3600, serverTokenRefreshGraceSeconds: 60 } as AppConfig;
    const catalogRepo = new CatalogRepository(dataSource, null as never, null as never);
    const catalog = {
      grantToPlayers: (key: string, uids: string[], m: EntityManager) => catalogRepo.grantToPlayers(key, uids, m),
    } as unknown as CatalogService;
    const job = new PeriodJobService(
      repo,
      catalog,
      null as unknown as TransactionService,
      null as unknown as Clock,
      config,
      null as unknown as EventBus,
    );
    const times: Array<[string, number]> = [];
    const loadB = loadAverage();
    const tb = performance.now();
    let tx = performance.now();
    let frozen: Awaited<ReturnType<PeriodJobService['freeze']>> = null;
    try {
      const closedB = await dataSource.transaction((m) => repo.close(b, new Date(), timed(m, times)));
      times.push([
        'close: transaction (BEGIN, COMMIT, pool)',
        performance.now() - tx - times.reduce((s, [, ms]) => s + ms, 0),
      ]);
      if (!closedB) throw new Error(`B (${b}) was not closed`);
      tx = performance.now();
      const before = times.reduce((s, [, ms]) => s + ms, 0);
      partsMs.length = 0;
      frozen = await dataSource.transaction((m) => job.freeze(b, timed(m, times)));
      times.push(['archive: ATP and chart blocks, two connections at once', partsMs.reduce((sum, ms) => sum + ms, 0)]);
      times.push([
        'archive+grant: transaction (BEGIN, COMMIT, pool)',
        performance.now() - tx - (times.reduce((s, [, ms]) => s + ms, 0) - before),
      ]);
      const totalB = performance.now() - tb;
      console.log(
        `CLOSE B (period job path: close, then freeze): ${fmt(totalB / 1000, 2)} s (goal ≤ 10 s), granted ${frozen?.granted?.uids.length ?? 0} — load ${loadB.toFixed(2)} before, ${loadAverage().toFixed(2)} after`,
      );
      for (const [name, ms] of times) console.log(`  ${name.padEnd(48)} ${fmt(ms, 1).padStart(9)} ms`);
    } catch (error) {
      // The service's pool has a 15 s client-side query timeout (database-options.ts): a longer statement fails the close.
      console.log(`CLOSE B FAILED after ${fmt((performance.now() - tb) / 1000, 2)} s: ${String(error)} — ${load()}`);
      for (const [name, ms] of times) console.log(`  ${name.padEnd(48)} ${fmt(ms, 1).padStart(9)} ms`);
      return;
    }
    const archivedB = await readWhole(repo, b, true);
    const wholeB = compareWhole(live, archivedB);
    console.log(
      `archive B vs the live read of A (same rows): ${fmt(wholeB.mismatches)} mismatches of ${fmt(wholeB.rows)} rows`,
    );
    const sizes = await client.query<{ atp: string; charts: string }>(
      `SELECT pg_size_pretty(pg_total_relation_size('period_atp_rank_block') + pg_total_relation_size('period_atp_uid_block')) AS atp,
              pg_size_pretty(pg_total_relation_size('period_chart_rank_block') + pg_total_relation_size('period_chart_uid_block')) AS charts`,
    );
    console.log(
      `archive blocks (A and B): ATP ${sizes.rows[0].atp}, charts ${sizes.rows[0].charts}; total ${secondsSince(started)} s — ${load()}`,
    );
  } finally {
    await dataSource.destroy();
    await client.end();
    await stopChild(service);
  }
}, stopAllChildren);
