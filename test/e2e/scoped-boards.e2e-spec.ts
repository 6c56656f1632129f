import fc from 'fast-check';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { gameplayPayload, uploadPlay } from '../factories/upload.factory';
import { startTestApp, TestApp } from '../support/test-app';

let time = Date.now() - 3_600_000;

async function putCharts(app: TestApp, levelIds: number[]): Promise<void> {
  const charts = levelIds.map((levelId) => ({
    levelId,
    name: `Chart ${levelId}`,
    difficultyConstant: 10,
    version: '1.0',
    active: true,
  }));
  expect((await app.admin.put('/admin/charts', charts)).status).toBe(200);
}

async function upload(
  app: TestApp,
  server: TestServerSession,
  player: TestPlayerSession,
  levelID: number,
  overrides: Record<string, unknown>,
): Promise<void> {
  await uploadPlay(app, server, player, gameplayPayload(levelID, (time += 1_000), overrides));
}

describe('Scoped boards (a set of uids)', () => {
  let app: TestApp;
  let server: TestServerSession;
  let p: TestPlayerSession[];
  const among = (path: string, body: unknown) =>
    app.http.post(`/server/leaderboards/${path}/among`, body, { token: server.accessToken });

  beforeAll(async () => {
    app = await startTestApp();
    server = await onlineServer(app);
    await putCharts(app, [801, 802]);
    p = [];
    for (let i = 0; i < 5; i++) p.push(await onlinePlayer(app, server));
    // Site: P2 0.8 (801 + 802 at 100 %) > P0 0.4 = P3 0.4 (uid order) > P1 0.3833; P4 only failed; P3 is banned later.
    await upload(app, server, p[0], 801, { acc: 100 });
    await upload(app, server, p[1], 801, { acc: 99 });
    await upload(app, server, p[2], 801, { acc: 100 });
    await upload(app, server, p[2], 802, { acc: 100 });
    await upload(app, server, p[3], 801, { acc: 100 });
    await upload(app, server, p[4], 801, { acc: 100, pass: false });
  });
  afterAll(() => app.close());

  const atpEntry = (i: number, rank: number, atp: number) => ({
    rank,
    uid: p[i].uid,
    username: p[i].username,
    displayName: p[i].username,
    atp,
  });

  it('ranks the players of the set among themselves, in the board order; unranked and unknown uids are left out', async () => {
    const response = await among('atp', { uids: [p[1].uid, p[3].uid, String(p[0].uid), p[4].uid, 987654321] });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      board: 'atp',
      entries: [atpEntry(0, 1, 0.4), atpEntry(3, 2, 0.4), atpEntry(1, 3, 0.3833)],
    });
    const chart = await among('charts/801', { uids: [p[1].uid, p[2].uid, p[0].uid], extra: 'ignored' });
    expect(chart.status).toBe(200);
    // 801: P0 100 % first, P2 100 % later, P1 99 %.
    expect(chart.body).toEqual({
      board: 'chart',
      levelId: 801,
      entries: [
        { rank: 1, uid: p[0].uid, username: p[0].username, displayName: p[0].username, acc: 100, rating: 12 },
        { rank: 2, uid: p[2].uid, username: p[2].username, displayName: p[2].username, acc: 100, rating: 12 },
        { rank: 3, uid: p[1].uid, username: p[1].username, displayName: p[1].username, acc: 99, rating: 11.5 },
      ],
    });
    expect((await among('charts/802', { uids: [p[0].uid] })).body).toEqual({
      board: 'chart',
      levelId: 802,
      entries: [],
    });
    expect((await among('charts/803', { uids: [p[0].uid] })).status).toBe(404);
  });

  it('leaves a banned player out, and counts it again after the unban', async () => {
    expect((await app.admin.post(`/admin/players/${p[3].uid}/ban`, { reason: 'test' })).status).toBe(200);
    try {
      const uids = p.map((player) => player.uid);
      expect((await among('atp', { uids })).body.entries).toEqual([
        atpEntry(2, 1, 0.8),
        atpEntry(0, 2, 0.4),
        atpEntry(1, 3, 0.3833),
      ]);
      const chart = (await among('charts/801', { uids })).body.entries as Array<{ uid: number }>;
      expect(chart.map((entry) => entry.uid)).toEqual([p[0].uid, p[2].uid, p[1].uid]);
    } finally {
      expect((await app.admin.delete(`/admin/players/${p[3].uid}/ban`)).status).toBe(204);
    }
    expect((await among('atp', { uids: [p[3].uid, p[1].uid] })).body.entries).toEqual([
      atpEntry(3, 1, 0.4),
      atpEntry(1, 2, 0.3833),
    ]);
  });

  it('answers 400 to a hostile uid list, naming the rule, and 401 without a server token', async () => {
    const message = 'uids must be 1 to 100 distinct positive integers';
    const many = Array.from({ length: 101 }, (_, i) => i + 1);
    for (const body of [
      { uids: many },
      { uids: [] },
      {},
      { uids: null },
      { uids: '1,2' },
      { uids: { 0: 1 } },
      { uids: [1, 1] },
      { uids: [1, '1'] },
      { uids: [1.5] },
      { uids: [0] },
      { uids: [-1] },
      { uids: ['abc'] },
      { uids: ['01'] },
      { uids: [2 ** 53] },
      { uids: ['9999999999999999999'] },
      { uids: [null] },
      { uids: [[1]] },
      { uids: [true] },
    ]) {
      for (const path of ['atp', 'charts/801']) {
        const response = await among(path, body);
        expect([JSON.stringify(body), path, response.status]).toEqual([JSON.stringify(body), path, 400]);
        expect(response.body).toMatchObject({
          error: 'BAD_REQUEST',
          // One rule of the list as a whole: the field, no element index.
          errors: [{ field: 'uids', message: 'must be 1 to 100 distinct positive integers' }],
        });
        expect(response.text).toContain(message);
      }
    }
    expect((await among('atp', { uids: many.slice(0, 100) })).status).toBe(200);
    expect((await among('charts/x', { uids: [1] })).status).toBe(400);
    expect((await app.http.post('/server/leaderboards/atp/among', { uids: [1] })).status).toBe(401);
  });
  it('answers the same sets on the public API and the admin API (GET, uids=a,b,c), 400 to a hostile query', async () => {
    const created = await app.admin.post('/admin/api-keys', { name: 'scoped', scopes: ['read:boards'] });
    expect(created.status).toBe(201);
    const key = (created.body as { key: string }).key;
    const uids = [p[1].uid, p[3].uid, p[0].uid, p[4].uid, 987654321];
    for (const path of ['atp', 'charts/801', 'charts/802']) {
      const expected = await among(path, { uids });
      expect(expected.status).toBe(200);
      const publicAnswer = await app.http.get(`/public/v1/boards/${path}/among?uids=${uids.join(',')}`, { token: key });
      expect([path, publicAnswer.status, publicAnswer.body]).toEqual([path, 200, expected.body]);
      expect(publicAnswer.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
      const adminAnswer = await app.admin.get(`/admin/boards/${path}/among?uids=${uids.join(',')}`);
      expect([path, adminAnswer.status, adminAnswer.body]).toEqual([path, 200, expected.body]);
    }
    expect((await app.admin.get(`/admin/boards/charts/803/among?uids=${p[0].uid}`)).status).toBe(404);
    expect((await app.http.get(`/public/v1/boards/charts/803/among?uids=${p[0].uid}`, { token: key })).status).toBe(
      404,
    );

    const message = 'uids must be 1 to 100 distinct positive integers';
    const many = Array.from({ length: 101 }, (_, i) => i + 1).join(',');
    for (const query of [
      '',
      'uids=',
      `uids=${many}`,
      'uids=1,1',
      'uids=1,,2',
      'uids=1,',
      'uids=,1',
      'uids=0',
      'uids=-1',
      'uids=01',
      'uids=1.5',
      'uids=abc',
      'uids=9999999999999999999',
      'uids=1&uids=2',
      'uids[]=1',
      'uids[0]=1',
      `uids=${'1,'.repeat(1_000)}1`,
      `uids=${'9'.repeat(5_000)}`,
      'uids=1%2C2%00',
      'uids=1&limit=10',
    ]) {
      for (const [label, get] of [
        ['public', (path: string) => app.http.get(path.replace('/admin/', '/public/v1/'), { token: key })],
        ['admin', (path: string) => app.admin.get(path)],
      ] as const) {
        for (const board of ['atp', 'charts/801']) {
          const response = await get(`/admin/boards/${board}/among?${query}`);
          expect([label, board, query.slice(0, 40), response.status]).toEqual([label, board, query.slice(0, 40), 400]);
          expect(response.body).toMatchObject({ error: 'BAD_REQUEST' });
          if (!query.includes('limit')) expect(response.text).toContain(message);
        }
      }
    }
    expect(
      (
        await app.http.get(`/public/v1/boards/atp/among?uids=${many.split(',').slice(0, 100).join(',')}`, {
          token: key,
        })
      ).status,
    ).toBe(200);
    expect((await app.admin.get('/admin/boards/charts/x/among?uids=1')).status).toBe(400);
    expect((await app.http.get('/admin/boards/atp/among?uids=1')).status).toBe(401);
    // A key without read:boards.
    const other = await app.admin.post('/admin/api-keys', { name: 'players only', scopes: ['read:players'] });
    const refused = await app.http.get('/public/v1/boards/atp/among?uids=1', {
      token: (other.body as { key: string }).key,
    });
    expect(refused.status).toBe(403);
  });
});

/**
 * Property: every rank a scoped board answers is the brute-force count over the set (1 + the
 * unbanned members of the set with a rating, or a best on the chart, ahead in the board order),
 * and exactly the ranked members are answered. Random ratings and bests with many ties, 10 % of
 * the players banned, sets of 1–100 uids with unknown ones mixed in.
 */
describe('Scoped boards: ranks equal a brute-force count over random data', () => {
  let app: TestApp;
  let server: TestServerSession;
  const PLAYERS = 400;
  const FIRST_UID = 5_000;
  interface Row {
    uid: number;
    atpE4: number | null;
    best: { acc: number; firstTimeMs: number } | null;
    banned: boolean;
  }
  const rows = new Map<number, Row>();

  beforeAll(async () => {
    app = await startTestApp();
    server = await onlineServer(app);
    await putCharts(app, [901]);
    const random = fc.sample(
      fc.record({
        atp: fc.option(fc.integer({ min: 0, max: 40 }), { freq: 5 }),
        acc: fc.option(fc.constantFrom(90, 95.5, 99, 100), { freq: 4 }),
        time: fc.integer({ min: 0, max: 5 }),
        banned: fc.boolean().map((b) => b && Math.random() < 0.2),
      }),
      { numRuns: PLAYERS, seed: 44 },
    );
    random.forEach((r, i) => {
      const uid = FIRST_UID + i;
      // A best on a chart implies a rating, as the upload writes them.
      const atpE4 = r.atp === null && r.acc === null ? null : (r.atp ?? 0) * 1_000 + 5;
      rows.set(uid, {
        uid,
        atpE4,
        best: r.acc === null ? null : { acc: r.acc, firstTimeMs: 1_700_000_000_000 + r.time * 1_000 },
        banned: r.banned,
      });
    });
    const all = [...rows.values()];
    await app.sql(`INSERT INTO player (uid, username) SELECT u, 'prop_' || u FROM unnest($1::bigint[]) AS u`, [
      all.map((r) => r.uid),
    ]);
    const rated = all.filter((r) => r.atpE4 !== null);
    await app.sql(
      `INSERT INTO player_rating (uid, atp, version, updated_at) SELECT u, a / 10000.0, 1, now() FROM unnest($1::bigint[], $2::int[]) AS t(u, a)`,
      [rated.map((r) => r.uid), rated.map((r) => r.atpE4)],
    );
    const best = all.filter((r) => r.best !== null);
    await app.sql(
      `INSERT INTO player_chart_best (uid, level_id, acc, first_time_ms, record_id, rating, version, updated_at)
       SELECT u, 901, a, t, u, 10, 1, now() FROM unnest($1::bigint[], $2::float8[], $3::bigint[]) AS x(u, a, t)`,
      [best.map((r) => r.uid), best.map((r) => r.best?.acc), best.map((r) => r.best?.firstTimeMs)],
    );
    await app.sql(`INSERT INTO player_ban (uid, reason) SELECT u, 'property' FROM unnest($1::bigint[]) AS u`, [
      all.filter((r) => r.banned).map((r) => r.uid),
    ]);
  });
  afterAll(() => app.close());

  /** Whether a is ahead of b on the board (the orders of decisions.md §5). */
  const siteAhead = (a: Row, b: Row) =>
    (a.atpE4 as number) > (b.atpE4 as number) || (a.atpE4 === b.atpE4 && a.uid < b.uid);
  const trackAhead = (a: Row, b: Row) => {
    const x = a.best as NonNullable<Row['best']>;
    const y = b.best as NonNullable<Row['best']>;
    return (
      x.acc > y.acc ||
      (x.acc === y.acc && (x.firstTimeMs < y.firstTimeMs || (x.firstTimeMs === y.firstTimeMs && a.uid < b.uid)))
    );
  };

  it('0 mismatches in at least 10,000 checked ranks', async () => {
    const sets = fc.sample(
      fc.uniqueArray(fc.integer({ min: FIRST_UID - 20, max: FIRST_UID + PLAYERS + 20 }), {
        minLength: 1,
        maxLength: 100,
        size: 'max',
      }),
      { numRuns: 500, seed: 4_404 },
    );
    let checks = 0;
    const mismatches: unknown[] = [];
    for (const [n, set] of sets.entries()) {
      const chart = n % 2 === 1;
      const members = set.map((uid) => rows.get(uid)).filter((r): r is Row => r !== undefined && !r.banned);
      const ranked = members.filter((r) => (chart ? r.best !== null : r.atpE4 !== null));
      const ahead = chart ? trackAhead : siteAhead;
      const expected = new Map(ranked.map((r) => [r.uid, 1 + ranked.filter((o) => ahead(o, r)).length]));
      const response = await app.http.post(
        `/server/leaderboards/${chart ? 'charts/901' : 'atp'}/among`,
        { uids: set },
        { token: server.accessToken },
      );
      expect(response.status).toBe(200);
      const entries = response.body.entries as Array<{ uid: number; rank: number }>;
      if (entries.length !== expected.size) mismatches.push({ set, entries: entries.length, expected: expected.size });
      for (const entry of entries) {
        checks++;
        if (expected.get(entry.uid) !== entry.rank) mismatches.push({ set, entry, expected: expected.get(entry.uid) });
      }
    }
    expect(mismatches).toEqual([]);
    expect(checks).toBeGreaterThanOrEqual(10_000);
  });
});
