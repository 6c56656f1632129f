import { seededRandom } from '../../bench/simulate/rng';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { indexAgainstSql } from '../support/rank-index-check';
import { startTestApp, TestApp } from '../support/test-app';
import { sleep } from '../support/wait';
import { PlayRecordRepository } from '../../src/upload/play-record.repository';
import { RankIndex } from '../../src/ranking/rank-index/rank-index';
import { atpTenThousandths, playRating } from '../../src/upload/rating';
import { toTenThousandths } from '../../src/ranking/rating-scale';

/**
 * The upload's one statement (rhythmc_upload_record, src/upload/sql/rhythmc_upload_record.sql)
 * carries the arithmetic of src/upload/rating.ts in SQL: the play rating, the rounding to
 * ten-thousandths and ATP. The two forms are compared here value by value, on random values and on
 * the ones where a rounding could go either way; the in-process rank index, staged after that
 * statement commits, is compared with SQL after concurrent uploads of the same players.
 */

describe('rating arithmetic: SQL and rating.ts agree', () => {
  let app: TestApp;
  // Seeded, so a failure names values that can be replayed.
  const random = seededRandom(20261126);

  beforeAll(async () => {
    app = await startTestApp({ redis: false });
  });
  afterAll(async () => {
    await app.close();
  });

  it('rhythmc_play_rating equals playRating, at every band edge and on random plays', async () => {
    const accs = [
      0, 50, 94.9999, 94.99999999999999, 95, 95.0001, 96.5, 97.99999, 98, 98.0001, 99.9999, 99.99999999999999, 100,
    ];
    const constants = [0, 0.1, 1, 7.5, 12.3, 14.7, 15, 16.9];
    const pairs: Array<[number, number]> = [];
    for (const constant of constants) for (const acc of accs) pairs.push([constant, acc]);
    for (let i = 0; i < 4_000; i++) pairs.push([Math.round(random() * 170) / 10, random() * 100]);
    const rows = await app.sql<{ rating: number }>(
      `SELECT rhythmc_play_rating(c, a) AS rating
         FROM unnest($1::float8[], $2::float8[]) WITH ORDINALITY AS t(c, a, n) ORDER BY n`,
      [pairs.map(([c]) => c), pairs.map(([, a]) => a)],
    );
    expect(rows.map((row) => row.rating)).toEqual(pairs.map(([c, a]) => playRating(c, a)));
  });

  it('rhythmc_rating_e4 equals toTenThousandths, on halves, binary noise and random values', async () => {
    const values: number[] = [0, 1e-9, 0.00004, 0.00005, 0.00015, 1.00005, 2.00005, 0.3, 4.8, 17.99995, 123.45675];
    // Every x.xxxx5 between 0 and 20 in steps that hit binary noise on both sides of the half.
    for (let e4 = 0; e4 < 200_000; e4 += 37) values.push((e4 + 0.5) / 10_000, e4 / 10_000 + 0.00005);
    // The neighbours of those halves, one ulp away.
    for (let e4 = 1; e4 < 20_000; e4 += 997) {
      const half = (e4 + 0.5) / 10_000;
      values.push(half * (1 + Number.EPSILON), half * (1 - Number.EPSILON));
    }
    // The edges of the function's fast path: fractions of a ten-thousandth at 0.4999 and 0.49995 (where
    // the 12 significant digits may decide), 1 and 10^8 ten-thousandths.
    for (let e4 = 3; e4 < 200_000; e4 += 1_009)
      values.push((e4 + 0.4999) / 10_000, (e4 + 0.49995) / 10_000, (e4 + 0.49989) / 10_000);
    values.push(0.99995e-4, 1e-4, 1.00005e-4, 9_999.999949, 9_999.99995, 10_000, 10_000.00005, 12_345.67895);
    for (let i = 0; i < 3_000; i++) values.push(random() * 20, random() * 1e6, random() * 1e-3, (random() * 600) / 30);
    // One simple-protocol statement (the values inline, each in its shortest round-trip text): on
    // the embedded database the test's client shares PGlite's one backend with the service's
    // timers, and a 200,000-value Bind once met an unnamed statement another client had parsed.
    const rows = await app.sql<{ e4: string }>(
      `SELECT rhythmc_rating_e4(v)::text AS e4 FROM unnest('{${values.map(String).join(',')}}'::float8[]) WITH ORDINALITY AS t(v, n) ORDER BY n`,
    );
    expect(rows.map((row) => Number(row.e4))).toEqual(values.map((value) => toTenThousandths(value)));
  });

  it('rhythmc_atp_e4 equals atpTenThousandths, with fewer and more than 30 ratings', async () => {
    const sets: number[][] = [[], [9], [7.5 + 1 + 0.5]];
    for (let i = 0; i < 400; i++) {
      const size = 1 + Math.floor(random() * 45);
      sets.push(Array.from({ length: size }, () => playRating(Math.round(random() * 150) / 10, 90 + random() * 10)));
    }
    // Ten equal ratings and a set where the order of the sum matters in binary.
    sets.push(
      Array.from({ length: 10 }, () => 0.1),
      [1e-5, 16.5, 0.30000000000000004, 3, 2.9999999999999996],
    );
    const rows = await app.sql<{ e4: string }>(
      `SELECT rhythmc_atp_e4(ARRAY(SELECT jsonb_array_elements_text(s)::float8))::text AS e4
         FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t(s, n) ORDER BY n`,
      [JSON.stringify(sets)],
    );
    expect(rows.map((row) => Number(row.e4))).toEqual(sets.map((set) => atpTenThousandths(set)));
  });
});

describe('the in-process rank index after concurrent uploads of the same players', () => {
  let app: TestApp;
  let server: TestServerSession;
  let players: TestPlayerSession[];
  let clock = Date.now() - 7_200_000;

  const post = (player: TestPlayerSession, levelID: number, acc: number, pass = true) => {
    const payload = gameplayPayload(levelID, (clock += 1_000), { acc, pass });
    return app.http.post(
      '/player/upload',
      {
        player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: payload.time + 250 },
        server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
        payload,
      },
      { token: server.accessToken },
    );
  };
  const rankIndex = () => app.get<RankIndex>(RankIndex as never);
  async function indexReady(): Promise<void> {
    for (let i = 0; i < 200 && !(await rankIndex().stats()).ready; i++) await sleep(50);
    expect((await rankIndex().stats()).ready).toBe(true);
  }

  beforeAll(async () => {
    app = await startTestApp({ redis: false });
    server = await onlineServer(app);
    await defineCharts(app, [701, 702], 12);
    players = [];
    for (let i = 0; i < 4; i++) players.push(await onlinePlayer(app, server));
  });
  afterAll(async () => {
    await app.close();
  });

  it('stages each player’s new bests in commit order: the index answers what SQL counts', async () => {
    const uploads = players.flatMap((player, p) =>
      Array.from({ length: 8 }, (_, i) => post(player, 701 + (i % 2), 90 + i + p / 10)),
    );
    const responses = await Promise.all(uploads);
    expect(responses.map((response) => response.status)).toEqual(uploads.map(() => 200));
    expect(
      await app.sql<{ bests: number; records: number }>(
        'SELECT (SELECT count(*) FROM player_chart_best)::int AS bests, (SELECT count(*) FROM play_record)::int AS records',
      ),
    ).toEqual([{ bests: 8, records: 32 }]);
    const { index, sql } = await indexAgainstSql(app);
    expect(index).toEqual(sql);
    // Every player's best on each chart is the last (highest) of its plays there.
    expect(
      await app.sql(
        'SELECT level_id, array_agg(acc ORDER BY uid) AS accs FROM player_chart_best GROUP BY level_id ORDER BY level_id',
      ),
    ).toEqual([
      { level_id: 701, accs: [96, 96.1, 96.2, 96.3] },
      { level_id: 702, accs: [97, 97.1, 97.2, 97.3] },
    ]);
  });

  it('stages a player’s writes in commit order even when the first one’s answer is slow to arrive', async () => {
    const [player] = players;
    const records = app.get(PlayRecordRepository);
    const original = records.uploadInOneStatement.bind(records);
    // The first upload's statement commits, then its answer is held back while the second arrives.
    const spy = jest.spyOn(records, 'uploadInOneStatement').mockImplementationOnce(async (...args) => {
      const written = await original(...args);
      await sleep(400);
      return written;
    });
    try {
      const first = post(player, 701, 99.1);
      await sleep(100);
      const second = post(player, 701, 99.2);
      const [a, b] = await Promise.all([first, second]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect([a.body.personalBest, b.body.personalBest]).toEqual([true, true]);
    } finally {
      spy.mockRestore();
    }
    const { index, sql } = await indexAgainstSql(app);
    expect(index).toEqual(sql);
  });

  it('reloads from the tables when the statement’s answer is lost after its commit', async () => {
    const [, player] = players;
    const records = app.get(PlayRecordRepository);
    const original = records.uploadInOneStatement.bind(records);
    const spy = jest.spyOn(records, 'uploadInOneStatement').mockImplementationOnce(async (...args) => {
      await original(...args);
      throw new Error('Query read timeout');
    });
    try {
      // A lost answer after the commit, as node-postgres reports a client-side query timeout.
      const lost = await post(player, 702, 99.9);
      expect(lost.status).toBe(503);
      expect(lost.body).toEqual({ error: 'UNAVAILABLE', message: 'The database cannot be reached' });
    } finally {
      spy.mockRestore();
    }
    // It was committed: the record and the best are stored, and the index learns them by reloading.
    expect(await app.sql('SELECT acc FROM player_chart_best WHERE uid = $1 AND level_id = 702', [player.uid])).toEqual([
      { acc: 99.9 },
    ]);
    await indexReady();
    const { index, sql } = await indexAgainstSql(app);
    expect(index).toEqual(sql);
  });

  it('answers and stores the same through the one statement and through the transaction', async () => {
    const [a, b] = [await onlinePlayer(app, server), await onlinePlayer(app, server)];
    await defineCharts(app, [711, 712, 713], 13.7);
    const records = app.get(PlayRecordRepository);
    const original = records.uploadInOneStatement.bind(records);
    // b's uploads take the transactional path: the statement answers as for a chart it has no row of (nothing written).
    const spy = jest
      .spyOn(records, 'uploadInOneStatement')
      .mockImplementation((record, ...rest) =>
        record.uid === String(b.uid) ? Promise.resolve({ outcome: 'chart' }) : original(record, ...rest),
      );
    const plays: Array<[number, number, boolean?]> = [
      [711, 96.5],
      [711, 95.25],
      [712, 100],
      [711, 98.75],
      [713, 90, false],
      [713, 99.99],
      [712, 99.5],
    ];
    const answers: Array<[unknown, unknown]> = [];
    try {
      for (const [level, acc, pass] of plays) {
        const [x, y] = [await post(a, level, acc, pass), await post(b, level, acc, pass)];
        expect([x.status, y.status]).toEqual([200, 200]);
        const { siteRank: _s1, trackRank: _t1, ...fromStatement } = x.body;
        const { siteRank: _s2, trackRank: _t2, ...fromTransaction } = y.body;
        answers.push([fromStatement, fromTransaction]);
      }
      expect(spy.mock.calls.filter(([record]) => record.uid === String(b.uid))).toHaveLength(plays.length);
    } finally {
      spy.mockRestore();
    }
    for (const [fromStatement, fromTransaction] of answers) expect(fromStatement).toEqual(fromTransaction);
    const stateOf = (uid: number) =>
      app.sql(
        `SELECT (SELECT atp FROM player_rating WHERE uid = $1) AS atp,
                (SELECT json_agg(json_build_array(level_id, acc, rating) ORDER BY level_id) FROM player_chart_best WHERE uid = $1) AS bests,
                (SELECT count(*)::int FROM play_record WHERE uid = $1) AS records`,
        [uid],
      );
    expect(await stateOf(a.uid)).toEqual(await stateOf(b.uid));
    expect((await stateOf(a.uid))[0]).toMatchObject({ records: plays.length });
    const { index, sql } = await indexAgainstSql(app);
    expect(index).toEqual(sql);
  });
});
