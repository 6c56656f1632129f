import { DataSource } from 'typeorm';
import { PeriodArchiveBlocks1795890000000 } from '../../migrations/1795890000000-PeriodArchiveBlocks';
import { DropPeriodArchiveRows1795892000000 } from '../../migrations/1795892000000-DropPeriodArchiveRows';
import { Clock } from '../../src/common/clock';
import { formatLocalDateTime } from '../../src/common/time';
import { PeriodJobService } from '../../src/ranking/periods/period-job.service';
import { ARCHIVE_BLOCK } from '../../src/ranking/periods/period.repository';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Closed periods archived in blocks (docs/decisions.md "Periods and seasons", archive layout):
 * boards of a few thousand players, so that ranks, windows and erasures cross block boundaries,
 * written in SQL into a season's live tables and closed by the admin route; every archived rank
 * against a brute-force ranking of the stored rows, windows and tops against the last live read;
 * an erasure through the admin route; the upgrade's copy of a row archive and the contract step
 * that drops the rows; a period archived before the blocks (during a rolling upgrade).
 */
const PLAYERS = 2 * ARCHIVE_BLOCK + 600;
const CHART = 951;
/** Every 97th player banned: absent from the live boards, so from the archive. */
const BANNED_EVERY = 97;

interface Entry {
  rank: number;
  uid: number;
}

const local = (date: Date) => formatLocalDateTime(date);

/** The service's clock in these tests: a whole second, moved by hand (a season may not start before the current second). */
let now = new Date(Math.floor(Date.now() / 1_000) * 1_000);

async function createSeason(app: TestApp, slug: string, closeRule?: { collection: string; top: number }) {
  const created = await app.admin.post('/admin/seasons', {
    slug,
    name: slug,
    startsAt: local(now),
    endsAt: local(new Date(now.getTime() + 86_400_000)),
    ...(closeRule ? { closeRule } : {}),
  });
  expect(created.status).toBe(201);
  return String(created.body.id as number);
}

/** `count` players, the first uid returned (the rest follow it). */
async function createPlayers(app: TestApp, prefix: string, count: number): Promise<number> {
  const rows = await app.sql<{ uid: string }>(
    `INSERT INTO player (uuid, username, display_name, extra_options)
     SELECT gen_random_uuid(), $1 || i, '', '{}'::jsonb FROM generate_series(1, $2::int) AS i RETURNING uid`,
    [prefix, count],
  );
  return Math.min(...rows.map((row) => Number(row.uid)));
}

/** The season's live rows: ATP with many ties (uid decides), a chart for two thirds with ties on accuracy and time. */
async function fillSeason(app: TestApp, period: string, first: number, count: number): Promise<void> {
  await app.sql(
    `INSERT INTO period_rating (period_id, uid, atp)
     SELECT $1::bigint, $2::bigint + i, round(((i * 7919) % 900)::numeric / 7, 4) FROM generate_series(0, $3::int - 1) AS i`,
    [period, first, count],
  );
  await app.sql(
    `INSERT INTO period_chart_best (period_id, uid, level_id, acc, first_time_ms, record_id, rating)
     SELECT $1::bigint, $2::bigint + i, $4::int, 90 + ((i * 31) % 11), 1000 + (i % 5), 1, 10 + (i % 3)
       FROM generate_series(0, $3::int - 1) AS i WHERE i % 3 <> 0`,
    [period, first, count, CHART],
  );
  await app.sql(
    `INSERT INTO player_ban (uid, reason) SELECT $1::bigint + i, 'test' FROM generate_series(0, $2::int - 1) AS i
      WHERE i % ${BANNED_EVERY} = 5`,
    [first, count],
  );
}

/** The boards ranked by brute force over the stored rows (the orders of decisions.md §5, bans left out). */
async function bruteForce(app: TestApp, period: string) {
  const banned = new Set(
    (await app.sql<{ uid: string }>('SELECT uid FROM player_ban WHERE lifted_at IS NULL')).map((r) => Number(r.uid)),
  );
  const atp = (
    await app.sql<{ uid: string; atp: string }>('SELECT uid, atp FROM period_rating WHERE period_id = $1', [period])
  )
    .map((r) => ({ uid: Number(r.uid), key: Number(r.atp) }))
    .filter((r) => !banned.has(r.uid))
    .sort((a, b) => b.key - a.key || a.uid - b.uid)
    .map((r, i) => ({ rank: i + 1, uid: r.uid }));
  const chart = (
    await app.sql<{ uid: string; acc: number; t: string }>(
      'SELECT uid, acc, first_time_ms AS t FROM period_chart_best WHERE period_id = $1 AND level_id = $2',
      [period, CHART],
    )
  )
    .map((r) => ({ uid: Number(r.uid), acc: r.acc, t: Number(r.t) }))
    .filter((r) => !banned.has(r.uid))
    .sort((a, b) => b.acc - a.acc || a.t - b.t || a.uid - b.uid)
    .map((r, i) => ({ rank: i + 1, uid: r.uid }));
  return { atp, chart };
}

/** Every archived entry of the period, by board, from the rank blocks and from the uid blocks. */
async function archived(app: TestApp, period: string) {
  // Both kinds of blocks hold (rank, uid) pairs: read in rank order, each must be the whole board.
  const read = (table: string, filter: string) =>
    app.sql<{ rank: number; uid: string }>(
      `SELECT a.rank, a.uid FROM ${table} b CROSS JOIN LATERAL unnest(b.ranks, b.uids) AS a(rank, uid)
        WHERE b.period_id = $1 ${filter} ORDER BY a.rank`,
      [period],
    );
  const entries = (rows: Array<{ rank: number; uid: string }>): Entry[] =>
    rows.map((row) => ({ rank: row.rank, uid: Number(row.uid) }));
  return {
    atp: entries(await read('period_atp_rank_block', '')),
    atpByUid: entries(await read('period_atp_uid_block', '')),
    chart: entries(await read('period_chart_rank_block', `AND b.level_id = ${CHART}`)),
    chartByUid: entries(await read('period_chart_uid_block', `AND b.level_id = ${CHART}`)),
  };
}

/** The ranks in a uid block are sorted by uid, each block starts at its first uid, and blocks hold ARCHIVE_BLOCK entries. */
async function uidBlocksOrdered(app: TestApp, period: string): Promise<boolean> {
  const rows = await app.sql<{ ok: boolean }>(
    `SELECT bool_and(b.first_uid = b.uids[1] AND b.uids = (SELECT array_agg(x ORDER BY x) FROM unnest(b.uids) AS x)
                     AND cardinality(b.uids) <= ${ARCHIVE_BLOCK}) AS ok
       FROM period_atp_uid_block b WHERE b.period_id = $1`,
    [period],
  );
  return rows[0].ok;
}

const board = (app: TestApp, path: string, query: Record<string, string | number>) =>
  app.admin.get(`/admin/boards/${path}`, { query });

describe('Period archives in blocks (issue #44: a close of 1M players in ≤ 10 s)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
    jest.spyOn(app.get(Clock), 'now').mockImplementation(() => now);
    await app.get(PeriodJobService).runOnce();
    const charts = await app.admin.put('/admin/charts', [
      { levelId: CHART, name: 'Blocks', difficultyConstant: 10, version: '1.0', active: true },
    ]);
    expect(charts.status).toBe(200);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('archives every rank as a brute-force count over the stored rows; windows and tops across block boundaries equal the last live read; an erasure leaves a gap', async () => {
    const period = await createSeason(app, 'blocks-1');
    const first = await createPlayers(app, 'blk_', PLAYERS);
    await fillSeason(app, period, first, PLAYERS);
    const expected = await bruteForce(app, period);
    expect(expected.atp.length).toBeGreaterThan(2 * ARCHIVE_BLOCK);

    // The last live read: the top 100 and windows at every block boundary, the ends and a spread.
    const sampleRanks = (n: number) => [
      ...new Set(
        [1, 2, 3, n, n - 1, ...[ARCHIVE_BLOCK, 2 * ARCHIVE_BLOCK].flatMap((b) => [b - 2, b - 1, b, b + 1, b + 2])]
          .concat(Array.from({ length: 8 }, (_, i) => Math.floor(((i + 1) * n) / 9)))
          .filter((rank) => rank >= 1 && rank <= n),
      ),
    ];
    const reads = async () => {
      const out: Record<string, unknown> = {};
      for (const [path, list] of [
        ['atp', expected.atp],
        [`charts/${CHART}`, expected.chart],
      ] as const) {
        out[`${path} top`] = (await board(app, path, { period, limit: 100 })).body;
        for (const rank of sampleRanks(list.length)) {
          const uid = list[rank - 1].uid;
          out[`${path} around ${uid}`] = (await board(app, path, { period, around: uid, k: 3 })).body;
        }
      }
      return out;
    };
    const lastLive = await reads();
    // The live read itself agrees with the brute force (a check of the sample, not of the archive).
    expect(
      ((lastLive['atp top'] as { entries: Entry[] }).entries ?? []).map((e) => ({ rank: e.rank, uid: e.uid })),
    ).toEqual(expected.atp.slice(0, 100));

    now = new Date(now.getTime() + 1_000);
    const closed = await app.admin.post(`/admin/seasons/${period}/close`);
    expect(closed.status).toBe(200);
    expect(await app.sql('SELECT archived_in_blocks FROM board_period WHERE id = $1', [period])).toEqual([
      { archived_in_blocks: true },
    ]);

    const stored = await archived(app, period);
    expect(stored.atp).toEqual(expected.atp);
    expect(stored.chart).toEqual(expected.chart);
    expect(stored.atpByUid).toEqual(expected.atp);
    expect(stored.chartByUid).toEqual(expected.chart);
    expect(await uidBlocksOrdered(app, period)).toBe(true);
    expect(
      await app.sql(
        'SELECT block, cardinality(ranks) AS n FROM period_atp_rank_block WHERE period_id = $1 ORDER BY block',
        [period],
      ),
    ).toEqual([
      { block: 0, n: ARCHIVE_BLOCK },
      { block: 1, n: ARCHIVE_BLOCK },
      { block: 2, n: expected.atp.length - 2 * ARCHIVE_BLOCK },
    ]);

    const afterClose = await reads();
    for (const [key, body] of Object.entries(lastLive)) {
      const live = body as { period: Record<string, unknown> };
      expect([key, afterClose[key]]).toEqual([
        key,
        {
          ...live,
          period: { ...live.period, closed: true, endsAt: (closed.body.season as { endsAt: string }).endsAt },
        },
      ]);
    }

    // The player ranked ARCHIVE_BLOCK on the ATP board: the export lists their archived entries,
    // the erasure takes them out of both kinds of blocks, and the others keep their ranks.
    const erased = expected.atp[ARCHIVE_BLOCK - 1].uid;
    const chartRank = expected.chart.find((e) => e.uid === erased)?.rank;
    const exported = await app.admin.post(`/admin/players/${erased}/export`);
    expect(exported.status).toBe(200);
    const tables = exported.body.tables as Record<string, Array<Record<string, unknown>>>;
    expect(tables.periodAtpArchiveRanks).toEqual([expect.objectContaining({ period_id: period, rank: ARCHIVE_BLOCK })]);
    expect(tables.periodChartArchiveRanks).toEqual(
      chartRank === undefined ? [] : [expect.objectContaining({ period_id: period, level_id: CHART, rank: chartRank })],
    );
    const [{ username }] = await app.sql<{ username: string }>('SELECT username FROM player WHERE uid = $1', [erased]);
    const erasure = await app.admin.post(`/admin/players/${erased}/erase`, { confirm: username });
    expect(erasure.status).toBe(200);
    expect(erasure.body.rows).toMatchObject({
      periodAtpArchiveRanks: 1,
      periodAtpArchiveUids: 1,
      periodChartArchiveRanks: chartRank === undefined ? 0 : 1,
      periodChartArchiveUids: chartRank === undefined ? 0 : 1,
    });
    const without = (list: Entry[]) => list.filter((e) => e.uid !== erased);
    const gone = await archived(app, period);
    expect(gone).toEqual({
      atp: without(expected.atp),
      atpByUid: without(expected.atp),
      chart: without(expected.chart),
      chartByUid: without(expected.chart),
    });
    const ranksAround = async (rank: number, k: number) =>
      (
        (await board(app, 'atp', { period, around: expected.atp[rank - 1].uid, k })).body as { entries: Entry[] }
      ).entries.map((e) => e.rank);
    expect(await ranksAround(ARCHIVE_BLOCK - 1, 1)).toEqual([ARCHIVE_BLOCK - 2, ARCHIVE_BLOCK - 1]);
    expect(await ranksAround(ARCHIVE_BLOCK + 1, 2)).toEqual([
      ARCHIVE_BLOCK - 1,
      ARCHIVE_BLOCK + 1,
      ARCHIVE_BLOCK + 2,
      ARCHIVE_BLOCK + 3,
    ]);
    expect((await board(app, 'atp', { period, around: erased, k: 1 })).body).toEqual({
      error: 'NOT_FOUND',
      message: `No player with uid ${erased}`,
    });
  });

  it('a period archived before the blocks (by the release before them, during a rolling upgrade) is read live, then archived again in blocks without running its close rule twice; a failed try leaves nothing behind', async () => {
    const TITLE = 'rhythmc:title.blocks-upgrade';
    expect(
      (
        await app.admin.put('/admin/collections', [
          {
            key: TITLE,
            type: 'title',
            unlockMethod: { type: 'MANUAL' },
            properties: { title: TITLE, description: 'A season title', rarity: 'EPIC', position: true },
          },
        ])
      ).status,
    ).toBe(200);
    const period = await createSeason(app, 'blocks-upgrade', { collection: TITLE, top: 2 });
    const first = await createPlayers(app, 'upg_', 40);
    await fillSeason(app, period, first, 40);
    const expected = await bruteForce(app, period);
    const lastLive = (await board(app, 'atp', { period, limit: 100 })).body as { period: object; entries: Entry[] };
    // What the release before the blocks did at the close: closed, archived in its row tables (dropped
    // since: nothing of them is read), its rule granted (to the top 2).
    await app.sql(
      `UPDATE board_period SET closed_at = now(), ends_at = now(), archived_at = now(), granted_uids = $2::bigint[] WHERE id = $1`,
      [period, expected.atp.slice(0, 2).map((e) => String(e.uid))],
    );
    const grantedBefore = await app.sql('SELECT count(*)::int AS n FROM player_collection WHERE collection_key = $1', [
      TITLE,
    ]);

    // Read live until this release archives it: the same answer.
    const beforeJob = (await board(app, 'atp', { period, limit: 100 })).body as { period: object; entries: Entry[] };
    expect(beforeJob.entries).toEqual(lastLive.entries);

    // What a failed try of this release leaves (its parts commit on their own connections before
    // the freezing transaction): blocks nobody reads, cleared by the next try.
    await app.sql(
      `INSERT INTO period_atp_rank_block (period_id, block, ranks, uids, atps) VALUES ($1, 0, '{1}', $2, '{1}'),
        ($1, 7, '{7001}', $2, '{1}')`,
      [period, [String(first)]],
    );
    await app.sql(`INSERT INTO period_atp_uid_block (period_id, first_uid, uids, ranks) VALUES ($1, 1, '{1}', '{1}')`, [
      period,
    ]);
    await app.get(PeriodJobService).runOnce();
    expect(await app.sql('SELECT archived_in_blocks, granted_uids FROM board_period WHERE id = $1', [period])).toEqual([
      { archived_in_blocks: true, granted_uids: expected.atp.slice(0, 2).map((e) => String(e.uid)) },
    ]);
    const stored = await archived(app, period);
    expect(stored.atp).toEqual(expected.atp);
    expect(stored.atpByUid).toEqual(expected.atp);
    expect(
      await app.sql('SELECT count(*)::int AS n FROM player_collection WHERE collection_key = $1', [TITLE]),
    ).toEqual(grantedBefore);
    const afterJob = (await board(app, 'atp', { period, limit: 100 })).body as { period: object; entries: Entry[] };
    expect(afterJob.entries).toEqual(lastLive.entries);
  });

  it("the upgrade's migration copies the row archives into blocks, gaps included, and marks their periods; the contract step drops the rows and takes erased uids out of the blocks", async () => {
    const period = await createSeason(app, 'blocks-migrated');
    const first = await createPlayers(app, 'mig_', ARCHIVE_BLOCK + 30);
    await fillSeason(app, period, first, ARCHIVE_BLOCK + 30);
    const expected = await bruteForce(app, period);
    // Every entry of the other periods' archives, from both kinds of blocks (block boundaries may move).
    const blocks = async () => {
      const entries = [];
      for (const [table, columns] of [
        ['period_atp_rank_block', 'b.ranks, b.uids, b.atps) AS e(rank, uid, atp'],
        ['period_chart_rank_block', 'b.ranks, b.uids, b.accs, b.ratings) AS e(rank, uid, acc, rating'],
        ['period_atp_uid_block', 'b.uids, b.ranks) AS e(uid, rank'],
        ['period_chart_uid_block', 'b.uids, b.ranks) AS e(uid, rank'],
      ]) {
        const board = table.startsWith('period_chart') ? 'b.period_id, b.level_id' : 'b.period_id, 0';
        entries.push(
          await app.sql(
            `SELECT ${board}, e.* FROM ${table} b CROSS JOIN LATERAL unnest(${columns})
              WHERE b.period_id <> $1 ORDER BY 1, 2, 3`,
            [period],
          ),
        );
      }
      return entries;
    };
    // The earlier tests' archives (one with an erasure's gap): the contract's down copies them back
    // into rows, and the upgrade copies the rows into blocks again.
    const earlier = await blocks();
    expect(earlier[0].length).toBeGreaterThan(2 * ARCHIVE_BLOCK);
    const expand = new PeriodArchiveBlocks1795890000000();
    const contract = new DropPeriodArchiveRows1795892000000();
    // An erasure answered by the release before the blocks while instances rolled: the player's rows
    // deleted (never copied), the tombstone written; and one in a second uid block.
    const erasedInRows = expected.atp[ARCHIVE_BLOCK + 4].uid;
    const [lowest, highest] = [first, first + ARCHIVE_BLOCK + 29];
    const runner = app.get(DataSource).createQueryRunner();
    try {
      await contract.down(runner);
      await expand.down(runner);
      // The release before the blocks' archive of a closed period: rows, one erased (a gap at rank 7).
      await app.sql(`UPDATE board_period SET closed_at = now(), ends_at = now(), archived_at = now() WHERE id = $1`, [
        period,
      ]);
      await app.sql(
        `INSERT INTO period_atp_archive (period_id, rank, uid, atp)
         SELECT $1, row_number() OVER (ORDER BY t.atp DESC, t.uid ASC), t.uid, t.atp FROM period_rating t
          WHERE t.period_id = $1 AND NOT EXISTS (SELECT 1 FROM player_ban b WHERE b.uid = t.uid AND b.lifted_at IS NULL)`,
        [period],
      );
      await app.sql(
        `INSERT INTO period_chart_archive (period_id, level_id, rank, uid, acc, rating)
         SELECT $1, t.level_id, row_number() OVER (PARTITION BY t.level_id ORDER BY t.acc DESC, t.first_time_ms ASC, t.uid ASC), t.uid, t.acc, t.rating
           FROM period_chart_best t
          WHERE t.period_id = $1 AND NOT EXISTS (SELECT 1 FROM player_ban b WHERE b.uid = t.uid AND b.lifted_at IS NULL)`,
        [period],
      );
      await app.sql('DELETE FROM period_atp_archive WHERE period_id = $1 AND rank = 7', [period]);
      await expand.up(runner);
      expect(await app.sql('SELECT archived_in_blocks FROM board_period WHERE id = $1', [period])).toEqual([
        { archived_in_blocks: true },
      ]);
      const withoutRank7 = expected.atp.filter((e) => e.rank !== 7);
      const copied = await archived(app, period);
      expect(copied.atp).toEqual(withoutRank7);
      expect(copied.atpByUid).toEqual(withoutRank7);
      expect(copied.chart).toEqual(expected.chart);
      expect(copied.chartByUid).toEqual(expected.chart);
      expect(await uidBlocksOrdered(app, period)).toBe(true);
      expect(await blocks()).toEqual(earlier);

      // During the roll, the release before the blocks erases three players: the lowest and the
      // highest uid (the first and the last uid block) and one ranked in the second rank block.
      const gone = [lowest, highest, erasedInRows];
      await app.sql(`DELETE FROM period_atp_archive WHERE uid = ANY ($1::bigint[])`, [gone]);
      await app.sql(`DELETE FROM period_chart_archive WHERE uid = ANY ($1::bigint[])`, [gone]);
      await app.sql(
        `INSERT INTO player_erasure (uid, pseudonym) SELECT u, 'erased-' || u FROM unnest($1::bigint[]) AS u`,
        [gone],
      );
      await contract.up(runner);
    } finally {
      await runner.release();
    }
    expect(
      await app.sql(`SELECT to_regclass('period_atp_archive') AS atp, to_regclass('period_chart_archive') AS chart`),
    ).toEqual([{ atp: null, chart: null }]);
    // The erased entries left both kinds of blocks; every other entry kept its rank.
    const gone = new Set([lowest, highest, erasedInRows]);
    const kept = (list: Entry[]) => list.filter((e) => e.rank !== 7 && !gone.has(e.uid));
    expect(expected.atp.filter((e) => gone.has(e.uid))).toHaveLength(3);
    const stored = await archived(app, period);
    expect(stored.atp).toEqual(kept(expected.atp));
    expect(stored.atpByUid).toEqual(kept(expected.atp));
    const chartKept = expected.chart.filter((e) => !gone.has(e.uid));
    expect(chartKept.length).toBeLessThan(expected.chart.length);
    expect(stored.chart).toEqual(chartKept);
    expect(stored.chartByUid).toEqual(chartKept);
    // Other periods' blocks are untouched (none of their uids was erased).
    expect(await blocks()).toEqual(earlier);
    // Read from the blocks: a top holds the ranks up to N, a window the ranks within k.
    const top = (await board(app, 'atp', { period, limit: 10 })).body as { entries: Entry[] };
    expect(top.entries.map((e) => [e.rank, e.uid])).toEqual(
      kept(expected.atp)
        .filter((e) => e.rank <= 10)
        .map((e) => [e.rank, e.uid]),
    );
    const target = kept(expected.atp).find((e) => e.rank >= ARCHIVE_BLOCK) as Entry;
    const around = (await board(app, 'atp', { period, around: target.uid, k: 2 })).body as { entries: Entry[] };
    expect(around.entries.map((e) => [e.rank, e.uid])).toEqual(
      kept(expected.atp)
        .filter((e) => Math.abs(e.rank - target.rank) <= 2)
        .map((e) => [e.rank, e.uid]),
    );
  });
});
