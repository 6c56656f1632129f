/**
 * A live period window's statement at 1M players (issue #44 "fast live windows"), before and after
 * the rank counted by index only and the neighbours read by ranges of the order index (2026-11-29), on the data of bench/periods/close.ts (season A, open;
 * generate it with `GENERATE_ONLY=1 npm run bench:periods:close`): the service's statement
 * (LIVE_WINDOW_SQL, as PeriodRepository.window sends it) against the one before, which counted
 * the unbanned rows ahead in one COUNT. SAMPLES players drawn at random from each board (ATP, chart
 * 1), banned ones included; for each, both statements on one connection, as named statements (the
 * service's ReadQueries), in alternating order; the answers must be equal row for row.
 *
 * VACUUM=1 (default) first vacuums the period tables, as autovacuum would have on a running
 * network: this machine's PostgreSQL runs with autovacuum off, and without a visibility map every
 * count by index visits the heap too (VACUUM=0 measures that case).
 *
 *   BENCH_DATABASE_URL=… SAMPLES=40 npm run -s bench:periods:live-window
 */
import { Client } from 'pg';
import { unbanned } from '../../src/ranking/leaderboard.repository';
import { LIVE_WINDOW_SQL } from '../../src/ranking/periods/period.repository';
import { benchDatabaseUrl, fmt, intFromEnv, loadAverage, runMain } from '../harness/env';

const URL = benchDatabaseUrl('rhythmc_bench_periods_close');
const SAMPLES = intFromEnv('SAMPLES', 40);
const K = intFromEnv('K', 5);
const VACUUM = process.env.VACUUM !== '0';

interface Shape {
  name: string;
  table: string;
  filter: string;
  columns: string;
  order: string;
  reverse: string;
  ahead: string;
  behind: string;
  after: string;
  params: (period: string, uid: string) => unknown[];
}

/** The statement before 2026-11-29: the rank a COUNT of the unbanned rows ahead, the neighbours an OR across the index's columns. */
const before = (s: Shape, uid: string, k: string) => `WITH m AS (
    SELECT t.* FROM ${s.table} t WHERE ${s.filter} AND t.uid = ${uid} AND ${unbanned('t')}
  ), w AS (
    (SELECT 0 AS part, t.* FROM m t)
    UNION ALL (SELECT 1, t.* FROM ${s.table} t, m WHERE ${s.filter} AND ${s.ahead} AND ${unbanned('t')} ORDER BY ${s.reverse} LIMIT ${k})
    UNION ALL (SELECT 2, t.* FROM ${s.table} t, m WHERE ${s.filter} AND ${s.behind} AND ${unbanned('t')} ORDER BY ${s.order} LIMIT ${k})
  )
SELECT (SELECT count(*) + 1 FROM ${s.table} t, m WHERE ${s.filter} AND ${s.ahead} AND ${unbanned('t')}) AS rank,
       t.part, t.uid, ${s.columns}, p.username, p.display_name
  FROM w t JOIN player p ON p.uid = t.uid
 ORDER BY ${s.order}`;

const SHAPES: Shape[] = [
  {
    name: 'ATP',
    table: 'period_rating',
    filter: 't.period_id = $1',
    columns: 't.atp',
    order: 't.atp DESC, t.uid ASC',
    reverse: 't.atp ASC, t.uid DESC',
    ahead: '(t.atp > m.atp OR (t.atp = m.atp AND t.uid < m.uid))',
    behind: '(t.atp < m.atp OR (t.atp = m.atp AND t.uid > m.uid))',
    after: LIVE_WINDOW_SQL.atp,
    params: (period, uid) => [period, uid, K],
  },
  {
    name: 'chart 1',
    table: 'period_chart_best',
    filter: 't.period_id = $1 AND t.level_id = $2',
    columns: 't.acc, t.rating',
    order: 't.acc DESC, t.first_time_ms ASC, t.uid ASC',
    reverse: 't.acc ASC, t.first_time_ms DESC, t.uid DESC',
    ahead:
      '(t.acc > m.acc OR (t.acc = m.acc AND (t.first_time_ms < m.first_time_ms OR (t.first_time_ms = m.first_time_ms AND t.uid < m.uid))))',
    behind:
      '(t.acc < m.acc OR (t.acc = m.acc AND (t.first_time_ms > m.first_time_ms OR (t.first_time_ms = m.first_time_ms AND t.uid > m.uid))))',
    after: LIVE_WINDOW_SQL.chart,
    params: (period, uid) => [period, 1, uid, K],
  },
];

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

runMain(async () => {
  const client = new Client({ connectionString: URL });
  await client.connect();
  try {
    const period = await client.query<{ id: string }>(
      `SELECT id FROM board_period WHERE slug = 'bench-close-a' AND archived_at IS NULL`,
    );
    if (period.rows.length !== 1) throw new Error('needs season A open (GENERATE_ONLY=1 npm run bench:periods:close)');
    const a = period.rows[0].id;
    if (VACUUM) {
      const started = Date.now();
      await client.query('VACUUM (ANALYZE) period_rating, period_chart_best, player_ban');
      console.log(`VACUUM (ANALYZE) of the period tables: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    console.log(`season A (${a}), ${SAMPLES} windows a board, k=${K}, load ${loadAverage().toFixed(2)}`);
    for (const shape of SHAPES) {
      const uids = await client.query<{ uid: string }>(
        `SELECT t.uid::text AS uid FROM ${shape.table} t WHERE ${shape.filter} ORDER BY random() LIMIT ${SAMPLES}`,
        shape.name === 'ATP' ? [a] : [a, 1],
      );
      const statements = {
        before: {
          name: `bench_window_before_${shape.name}`,
          text: before(shape, shape.name === 'ATP' ? '$2' : '$3', shape.name === 'ATP' ? '$3' : '$4'),
        },
        after: { name: `bench_window_after_${shape.name}`, text: shape.after },
      };
      const times = { before: [] as number[], after: [] as number[] };
      let mismatches = 0;
      let unranked = 0;
      const run = async (which: 'before' | 'after', uid: string) => {
        const started = process.hrtime.bigint();
        const result = await client.query({ ...statements[which], values: shape.params(a, uid) });
        times[which].push(Number(process.hrtime.bigint() - started) / 1e6);
        return JSON.stringify(result.rows);
      };
      // Warm-up (and past the five custom plans of a named statement): the first three players.
      for (const { uid } of uids.rows.slice(0, 3)) {
        for (let i = 0; i < 2; i++) {
          await run('before', uid);
          await run('after', uid);
        }
      }
      times.before.length = 0;
      times.after.length = 0;
      const loadBefore = loadAverage();
      for (const [i, { uid }] of uids.rows.entries()) {
        const [first, second] = i % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
        const one = await run(first, uid);
        const other = await run(second, uid);
        if (one !== other) mismatches++;
        if (one === '[]') unranked++;
      }
      const sorted = {
        before: [...times.before].sort((x, y) => x - y),
        after: [...times.after].sort((x, y) => x - y),
      };
      const p50 = { before: percentile(sorted.before, 0.5), after: percentile(sorted.after, 0.5) };
      console.log(
        `${shape.name}: before p50 ${fmt(p50.before, 1)} p99 ${fmt(percentile(sorted.before, 0.99), 1)} ms; ` +
          `after p50 ${fmt(p50.after, 1)} p99 ${fmt(percentile(sorted.after, 0.99), 1)} ms; ` +
          `after/before p50 ${(p50.after / p50.before).toFixed(2)} ×; ${mismatches} mismatches of ${uids.rows.length} ` +
          `(${unranked} banned: no rows both ways); load ${loadBefore.toFixed(2)} → ${loadAverage().toFixed(2)}`,
      );
      if (mismatches > 0) process.exitCode = 1;
    }
  } finally {
    await client.end();
  }
});
