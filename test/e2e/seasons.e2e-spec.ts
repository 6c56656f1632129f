import { Clock } from '../../src/common/clock';
import { formatLocalDateTime } from '../../src/common/time';
import { PeriodJobService } from '../../src/ranking/periods/period-job.service';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { gameplayPayload, uploadPlay } from '../factories/upload.factory';
import { badField, badLines } from '../support/bad-request';
import { Client } from 'pg';
import { testDatabaseServerUrl } from '../setup/test-env';
import { multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';
import { WsClient, type Frame } from '../support/ws-client';

/**
 * Seasons for staff (issue #44 items 1–2; docs/decisions.md "Seasons: staff and the close rule"):
 * the admin API with its rules and audit rows, and the close rule: the archive equals the last
 * live read, the top N own the collection, and the game server of each one online is told over
 * its WebSocket (through the realtime outbox), on one instance and across two.
 */

const LOCAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
const TITLE = 'rhythmc:title.spring-champion';
const OTHER_TITLE = 'rhythmc:title.autumn-champion';
let playTime = Date.now() - 3_600_000;

const title = (key: string) => ({
  key,
  type: 'title',
  unlockMethod: { type: 'MANUAL' },
  properties: { title: key, description: 'A season title', rarity: 'EPIC', position: true },
});

async function putCatalog(app: TestApp, levelIds: number[]): Promise<void> {
  const charts = await app.admin.put(
    '/admin/charts',
    levelIds.map((levelId) => ({
      levelId,
      name: `Chart ${levelId}`,
      difficultyConstant: 10,
      version: '1.0',
      active: true,
    })),
  );
  expect(charts.status).toBe(200);
  expect((await app.admin.put('/admin/collections', [title(TITLE), title(OTHER_TITLE)])).status).toBe(200);
}

async function play(
  app: TestApp,
  server: TestServerSession,
  player: TestPlayerSession,
  levelID: number,
  overrides: Record<string, unknown>,
): Promise<void> {
  await uploadPlay(app, server, player, gameplayPayload(levelID, (playTime += 1_000), overrides));
}

const owners = async (app: TestApp, key: string): Promise<number[]> =>
  (
    await app.sql<{ uid: string }>(
      'SELECT uid::text AS uid FROM player_collection WHERE collection_key = $1 ORDER BY uid',
      [key],
    )
  ).map((row) => Number(row.uid));

const seasonRows = (app: TestApp) =>
  app.sql(
    `SELECT id::int AS id, slug, name, starts_at, ends_at, grant_collection, grant_top, closed_at IS NOT NULL AS closed
       FROM board_period WHERE kind = 'season' ORDER BY id`,
  );

/** board_period.granted_uids of a season: whom its close rule granted (null: not frozen, or no rule). */
const grantedUids = async (app: TestApp, id: number): Promise<number[] | null> => {
  const [row] = await app.sql<{ uids: string[] | null }>(
    'SELECT granted_uids AS uids FROM board_period WHERE id = $1',
    [id],
  );
  return row.uids === null ? null : row.uids.map(Number);
};

const granted = (frames: Frame[]) => frames.filter((frame) => frame.event === 'collections_granted');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Seasons: the admin API and the close rule (issue #44)', () => {
  let app: TestApp;
  let clock: jest.SpyInstance<Date, []>;
  /** The service's clock in this test: whole seconds, moved by hand. */
  let now: Date;
  /** The test's start, whole seconds: every time below is an offset from it. */
  let t0: Date;
  const at = (offsetSeconds: number) => new Date(t0.getTime() + offsetSeconds * 1_000);
  const local = (date: Date) => formatLocalDateTime(date);
  const patch = (path: string, body: unknown) => app.admin.request('PATCH', path, { body });

  beforeAll(async () => {
    app = await startTestApp();
    t0 = new Date(Math.floor(Date.now() / 1_000) * 1_000);
    now = t0;
    clock = jest.spyOn(app.get(Clock), 'now').mockImplementation(() => now);
    await app.get(PeriodJobService).runOnce();
    await putCatalog(app, [901, 902]);
  });
  afterAll(async () => {
    clock.mockRestore();
    await app.close();
  });

  let spring: { id: number; slug: string };

  it('creates a season, lists it and reads it, with exact bodies and the stored row', async () => {
    const body = {
      slug: 'spring-2027',
      name: 'Spring 2027',
      startsAt: local(at(60)),
      endsAt: local(at(3_600)),
      closeRule: { collection: TITLE, top: 3 },
    };
    const created = await app.admin.post('/admin/seasons', body);
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    const expected = {
      id,
      slug: 'spring-2027',
      name: 'Spring 2027',
      startsAt: local(at(60)),
      endsAt: local(at(3_600)),
      closeRule: { collection: TITLE, top: 3, board: 'atp' },
      state: 'scheduled',
      closedAt: null,
      createdAt: expect.stringMatching(LOCAL) as unknown,
    };
    expect(created.body).toEqual(expected);
    expect(await seasonRows(app)).toEqual([
      {
        id,
        slug: 'spring-2027',
        name: 'Spring 2027',
        starts_at: at(60),
        ends_at: at(3_600),
        grant_collection: TITLE,
        grant_top: 3,
        closed: false,
      },
    ]);
    spring = { id, slug: 'spring-2027' };

    const other = await app.admin.post('/admin/seasons', {
      slug: '2027-overlap',
      name: 'Overlapping',
      startsAt: local(at(120)),
      endsAt: local(at(7_200)),
    });
    expect(other.status).toBe(201);
    expect(other.body.closeRule).toBeNull();
    // A slug may start with a digit, and the boards read it by that slug (their pattern once wanted a letter first).
    const bySlug = await app.admin.get('/admin/boards/atp', { query: { period: 'season:2027-overlap' } });
    expect({ status: bySlug.status, period: (bySlug.body as { period?: { id: number } }).period?.id }).toEqual({
      status: 200,
      period: other.body.id,
    });

    const page1 = await app.admin.get('/admin/seasons', { query: { limit: 1 } });
    expect(page1.status).toBe(200);
    expect(page1.body).toEqual({ items: [expected], nextCursor: expect.any(String) as unknown });
    const page2 = await app.admin.get('/admin/seasons', {
      query: { limit: 1, cursor: page1.body.nextCursor as string },
    });
    expect(page2.body).toEqual({ items: [other.body], nextCursor: null });
    expect((await app.admin.get(`/admin/seasons/${id}`)).body).toEqual(expected);
    const foreignCursor = Buffer.from('players:1').toString('base64url');
    expect((await app.admin.get('/admin/seasons', { query: { cursor: foreignCursor } })).body).toEqual(
      badField('cursor', 'must be the nextCursor of a previous page of this list'),
    );
    expect((await app.admin.get('/admin/seasons/99999')).body).toEqual({
      error: 'NOT_FOUND',
      message: 'No season with id 99999',
    });
    // A calendar period is not a season.
    const [day] = await app.sql<{ id: string }>(`SELECT id::text AS id FROM board_period WHERE kind = 'day' LIMIT 1`);
    expect((await app.admin.get(`/admin/seasons/${day.id}`)).status).toBe(404);
  });

  it('refuses every invalid season with a 400 or 409 and the error body, storing nothing', async () => {
    const valid = {
      slug: 'summer-2027',
      name: 'Summer 2027',
      startsAt: local(at(600)),
      endsAt: local(at(6_000)),
      closeRule: { collection: TITLE, top: 10 },
    };
    const cases: Array<[string, Record<string, unknown>, number, string]> = [
      ['upper case slug', { ...valid, slug: 'Summer' }, 400, 'slug must be'],
      ['digits-only slug', { ...valid, slug: '2027' }, 400, 'slug must be'],
      ['leading hyphen', { ...valid, slug: '-summer' }, 400, 'slug must be'],
      ['double hyphen', { ...valid, slug: 'a--b' }, 400, 'slug must be'],
      ['65-character slug', { ...valid, slug: 'a'.repeat(65) }, 400, 'slug must be'],
      ['slug not a string', { ...valid, slug: 7 }, 400, 'slug must be'],
      ['empty name', { ...valid, name: '' }, 400, 'name'],
      ['129-character name', { ...valid, name: 'n'.repeat(129) }, 400, 'name'],
      ['startsAt with a zone', { ...valid, startsAt: '2030-01-01T00:00:00Z' }, 400, 'startsAt must be an ISO local'],
      ['impossible date', { ...valid, startsAt: '2030-02-30T00:00:00' }, 400, 'startsAt must be an ISO local'],
      ['endsAt a number', { ...valid, endsAt: 1 }, 400, 'endsAt must be an ISO local'],
      ['start in the past', { ...valid, startsAt: local(at(-1)) }, 400, 'startsAt must not be in the past'],
      ['end before start', { ...valid, endsAt: local(at(599)) }, 400, 'endsAt must be after startsAt'],
      ['end equal to start', { ...valid, endsAt: valid.startsAt }, 400, 'endsAt must be after startsAt'],
      ['top 0', { ...valid, closeRule: { collection: TITLE, top: 0 } }, 400, 'closeRule.top must be'],
      ['top 1001', { ...valid, closeRule: { collection: TITLE, top: 1001 } }, 400, 'closeRule.top must be'],
      ['top 1.5', { ...valid, closeRule: { collection: TITLE, top: 1.5 } }, 400, 'closeRule.top must be'],
      ['top as text', { ...valid, closeRule: { collection: TITLE, top: '3' } }, 400, 'closeRule.top must be'],
      ['no top', { ...valid, closeRule: { collection: TITLE } }, 400, 'closeRule.top must be'],
      ['collection malformed', { ...valid, closeRule: { collection: 'title', top: 3 } }, 400, 'closeRule.collection'],
      [
        'collection not in the catalog',
        { ...valid, closeRule: { collection: 'rhythmc:title.none', top: 3 } },
        400,
        'closeRule.collection: no collection rhythmc:title.none in the catalog',
      ],
      ['closeRule an array', { ...valid, closeRule: [TITLE, 3] }, 400, 'closeRule must be an object'],
      ['closeRule text', { ...valid, closeRule: 'x' }, 400, 'closeRule must be an object'],
      ['closeRule unknown field', { ...valid, closeRule: { collection: TITLE, top: 3, board: 'atp' } }, 400, 'board'],
      ['unknown field', { ...valid, state: 'open' }, 400, 'state'],
      ['missing endsAt', { slug: 'x-1', name: 'X', startsAt: valid.startsAt }, 400, 'endsAt'],
      ['duplicate slug', { ...valid, slug: 'spring-2027' }, 409, 'A season with slug spring-2027 exists'],
    ];
    const before = await seasonRows(app);
    const answers = [];
    for (const [label, body, , message] of cases) {
      const response = await app.admin.post('/admin/seasons', body);
      answers.push({
        label,
        status: response.status,
        error: response.body.error as string,
        message: (response.body.message as string).includes(message) ? message : (response.body.message as string),
        keys: Object.keys(response.body as object).sort(),
        // Every 400 names at least one field here (decisions.md "Errors"); a 409 has no list.
        named: Array.isArray(response.body.errors) ? (response.body.errors as unknown[]).length > 0 : null,
      });
    }
    expect(answers).toEqual(
      cases.map(([label, , status, message]) => ({
        label,
        status,
        error: status === 409 ? 'CONFLICT' : 'BAD_REQUEST',
        message,
        keys: status === 409 ? ['error', 'message'] : ['error', 'errors', 'message'],
        named: status === 409 ? null : true,
      })),
    );
    // Whole bodies: the close rule's fields are named once, and a closeRule that is not an object is
    // one problem (not also class-validator's "nested property closeRule must be …").
    const refusal = async (closeRule: unknown): Promise<unknown> =>
      (await app.admin.post<unknown>('/admin/seasons', { ...valid, closeRule })).body;
    expect(await refusal({ collection: TITLE, top: 0 })).toEqual(
      badField('closeRule.top', 'must be an integer from 1 to 1000'),
    );
    expect(await refusal({ collection: 'title', top: 3 })).toEqual(
      badField('closeRule.collection', 'must be a collection key (namespace:path.name)'),
    );
    expect(await refusal('x')).toEqual(badField('closeRule', 'must be an object {collection, top} or null'));
    expect(await seasonRows(app)).toEqual(before);
    expect((await app.sql(`SELECT count(*)::int AS n FROM admin_audit WHERE action LIKE 'season.%'`))[0]).toEqual({
      n: 2,
    });
  });

  it('changes a season by the rules: the start only before it starts, never a past end, nothing once closed', async () => {
    const path = `/admin/seasons/${spring.id}`;
    const renamed = await patch(path, { name: 'Spring of 2027', startsAt: local(at(30)) });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Spring of 2027', startsAt: local(at(30)), state: 'scheduled' });
    expect((await patch(path, { closeRule: null })).body.closeRule).toBeNull();
    expect((await patch(path, { closeRule: { collection: TITLE, top: 3 } })).body.closeRule).toEqual({
      collection: TITLE,
      top: 3,
      board: 'atp',
    });
    const refusals = [
      [{ startsAt: local(at(-5)) }, 400, 'startsAt must not be in the past'],
      [{ endsAt: local(at(10)) }, 400, 'endsAt must be after startsAt'],
      [
        { closeRule: { collection: 'rhythmc:title.none', top: 1 } },
        400,
        'closeRule.collection: no collection rhythmc:title.none in the catalog',
      ],
      [{ slug: 'renamed' }, 400, 'slug: property slug should not exist'],
    ] as const;
    for (const [body, , message] of refusals)
      expect({ body, answer: (await patch(path, body)).body }).toEqual({ body, answer: badLines(message) });
    // null is no value for these (it reached the service as one): 400 on the field, the season unchanged.
    const before = await seasonRows(app);
    for (const field of ['name', 'startsAt', 'endsAt']) {
      const refused = await patch(path, { [field]: null });
      expect({
        field,
        status: refused.status,
        fields: [...new Set((refused.body.errors as { field: string }[]).map((e) => e.field))],
      }).toEqual({
        field,
        status: 400,
        fields: [field],
      });
    }
    expect(await seasonRows(app)).toEqual(before);

    now = at(31); // the season has started
    expect((await app.admin.get(path)).body.state).toBe('open');
    expect((await patch(path, { startsAt: local(at(60)) })).body).toEqual({
      error: 'CONFLICT',
      message: 'Season spring-2027 has started: its start cannot change',
    });
    expect((await patch(path, { endsAt: local(at(31)) })).body).toEqual(badField('endsAt', 'must be in the future'));
    expect((await app.admin.delete(path)).body).toEqual({
      error: 'CONFLICT',
      message: 'Season spring-2027 has started: close it instead',
    });
    const [row] = await seasonRows(app);
    expect(row).toMatchObject({ name: 'Spring of 2027', starts_at: at(30), grant_collection: TITLE, grant_top: 3 });

    // A season that has not started can be deleted, once.
    const [overlap] = (await seasonRows(app)).filter((season) => season.slug === '2027-overlap');
    expect((await app.admin.delete(`/admin/seasons/${String(overlap.id)}`)).status).toBe(204);
    expect((await app.admin.delete(`/admin/seasons/${String(overlap.id)}`)).status).toBe(404);
    expect((await seasonRows(app)).map((season) => season.slug)).toEqual(['spring-2027']);
  });

  it('closes at its end: the archive equals the last live read, the top 3 own the title, online ones are told', async () => {
    const s1 = await onlineServer(app);
    const s2 = await onlineServer(app);
    const [p0, p3, p2, banned] = [
      await onlinePlayer(app, s1),
      await onlinePlayer(app, s1),
      await onlinePlayer(app, s1),
      await onlinePlayer(app, s1),
    ];
    const p1 = await onlinePlayer(app, s2);
    await app.sql('INSERT INTO player_collection (uid, collection_key, granted_at) VALUES ($1, $2, $3)', [
      p1.uid,
      TITLE,
      new Date('2026-01-01T00:00:00Z'),
    ]);
    await play(app, s1, banned, 901, { acc: 100 });
    await play(app, s1, p0, 901, { acc: 99.5 });
    await play(app, s2, p1, 901, { acc: 99 });
    await play(app, s1, p2, 901, { acc: 98 });
    await play(app, s1, p3, 901, { acc: 97 });
    await play(app, s1, p3, 902, { acc: 100, pass: false }); // not counted
    expect((await app.admin.post(`/admin/players/${banned.uid}/ban`, { reason: 'test' })).status).toBe(200);
    expect(
      (await app.http.post('/player/logout', { uid: p2.uid, accessToken: p2.accessToken }, { token: s1.accessToken }))
        .status,
    ).toBe(204);

    const c1 = await WsClient.connect(app.baseUrl, s1.accessToken);
    const c2 = await WsClient.connect(app.baseUrl, s2.accessToken);
    try {
      const period = `season:${spring.slug}`;
      const lastLive = await app.admin.get('/admin/boards/atp', { query: { period } });
      expect(lastLive.status).toBe(200);
      const live = lastLive.body as { period: Record<string, unknown>; entries: Array<{ uid: number; rank: number }> };
      expect(live.entries.map((entry) => [entry.rank, entry.uid])).toEqual([
        [1, p0.uid],
        [2, p1.uid],
        [3, p2.uid],
        [4, p3.uid],
      ]);

      now = at(3_600); // the season's end (exclusive): due
      await app.get(PeriodJobService).runOnce();
      const archived = await app.admin.get('/admin/boards/atp', { query: { period } });
      expect(archived.body).toEqual({ ...live, period: { ...live.period, closed: true } });
      expect(await app.sql('SELECT archived_at IS NOT NULL AS a FROM board_period WHERE id = $1', [spring.id])).toEqual(
        [{ a: true }],
      );
      expect((await app.admin.get(`/admin/seasons/${spring.id}`)).body).toMatchObject({
        state: 'archived',
        closedAt: local(now),
      });

      // The top 3 own the title once; p1 kept its own grant; p3 (4th) and the banned player have none.
      expect(await owners(app, TITLE)).toEqual([p0.uid, p1.uid, p2.uid].sort((a, b) => a - b));
      expect(
        await app.sql('SELECT granted_at FROM player_collection WHERE uid = $1 AND collection_key = $2', [
          p1.uid,
          TITLE,
        ]),
      ).toEqual([{ granted_at: new Date('2026-01-01T00:00:00Z') }]);

      // Only p0 is newly granted and online (on s1): a frame is kept for s1's session, none for s2's.
      // The frame is not in the spec: c1 has not asked for it yet, so it stays kept.
      await sleep(300);
      expect(granted(c1.frames)).toEqual([]);
      const kept = await app.sql(
        `SELECT frame, delivered_at IS NOT NULL AS delivered FROM realtime_outbox WHERE frame->>'event' = 'collections_granted'`,
      );
      expect(kept).toEqual([
        {
          frame: {
            event: 'collections_granted',
            data: { uid: p0.uid, keys: [TITLE], reason: 'season', season: 'spring-2027' },
          },
          delivered: false,
        },
      ]);
      // Asking for it (collection_updates, opt-in like board_updates) sends what was kept.
      c1.send('collection_updates', { enabled: true });
      expect(await c1.next((f) => f.event === 'collection_updates')).toEqual({
        event: 'collection_updates',
        data: { enabled: true },
      });
      const frame = await c1.next((f) => f.event === 'collections_granted');
      expect(frame).toEqual(kept[0].frame);
      await sleep(300);
      expect(granted(c1.frames)).toHaveLength(1);
      expect(granted(c2.frames)).toEqual([]);
      expect(
        await app.sql(
          `SELECT frame, delivered_at IS NOT NULL AS delivered FROM realtime_outbox WHERE frame->>'event' = 'collections_granted'`,
        ),
      ).toEqual([{ frame, delivered: true }]);

      // A second run changes nothing.
      await app.get(PeriodJobService).runOnce();
      expect(await owners(app, TITLE)).toEqual([p0.uid, p1.uid, p2.uid].sort((a, b) => a - b));
      expect((await patch(`/admin/seasons/${spring.id}`, { name: 'x' })).body).toEqual({
        error: 'CONFLICT',
        message: 'Season spring-2027 is closed',
      });

      // The freeze stored whom the job's close granted on the season's row (p1 owned it already).
      expect(await grantedUids(app, spring.id)).toEqual([p0.uid, p2.uid].sort((a, b) => a - b));

      // Closing early: the close, then the freeze; the answer and the audit row say whom it granted.
      const autumn = await app.admin.post('/admin/seasons', {
        slug: 'autumn-2027',
        name: 'Autumn 2027',
        startsAt: local(now),
        endsAt: local(at(86_400)),
        closeRule: { collection: OTHER_TITLE, top: 1 },
      });
      expect(autumn.status).toBe(201);
      now = at(3_605);
      await play(app, s1, p3, 902, { acc: 100 });
      await play(app, s1, p0, 902, { acc: 90 });
      const closed = await app.admin.post(`/admin/seasons/${autumn.body.id as number}/close`);
      expect(closed.status).toBe(200);
      expect(closed.body).toEqual({
        season: { ...autumn.body, endsAt: local(now), state: 'archived', closedAt: local(now) },
        granted: { collection: OTHER_TITLE, uids: [p3.uid] },
      });
      expect(await owners(app, OTHER_TITLE)).toEqual([p3.uid]);
      expect(await grantedUids(app, autumn.body.id as number)).toEqual([p3.uid]);
      // The archive tables were analyzed after the commit (a fresh archive is not read with whole-table plans).
      // (ANALYZE sets the row estimate from the rows it counts; inserts leave it at -1, "never analyzed".)
      expect(
        await app.sql(
          `SELECT c.relname, c.reltuples > 0 AS analyzed FROM pg_class c
            WHERE c.relname LIKE 'period\\_%\\_block' ORDER BY c.relname`,
        ),
      ).toEqual([
        { relname: 'period_atp_rank_block', analyzed: true },
        { relname: 'period_atp_uid_block', analyzed: true },
        { relname: 'period_chart_rank_block', analyzed: true },
        { relname: 'period_chart_uid_block', analyzed: true },
      ]);
      expect(await c1.next((f) => f.event === 'collections_granted' && f.data.uid === p3.uid)).toEqual({
        event: 'collections_granted',
        data: { uid: p3.uid, keys: [OTHER_TITLE], reason: 'season', season: 'autumn-2027' },
      });
      expect((await app.admin.post(`/admin/seasons/${autumn.body.id as number}/close`)).body).toEqual({
        error: 'CONFLICT',
        message: 'Season autumn-2027 is closed already',
      });
      await sleep(200);
      expect(granted(c2.frames)).toEqual([]);
    } finally {
      c1.socket.close();
      c2.socket.close();
    }

    const audit = await app.sql<{ action: string; target: string; summary: Record<string, unknown> }>(
      `SELECT action, target, summary FROM admin_audit WHERE action LIKE 'season.%' ORDER BY id`,
    );
    const autumnId = audit[audit.length - 1].target;
    expect(audit.map((row) => [row.action, row.target])).toEqual([
      ['season.create', `season:${spring.id}`],
      ['season.create', expect.stringMatching(/^season:\d+$/)],
      ['season.update', `season:${spring.id}`],
      ['season.update', `season:${spring.id}`],
      ['season.update', `season:${spring.id}`],
      ['season.delete', expect.stringMatching(/^season:\d+$/)],
      ['season.create', autumnId],
      ['season.close', autumnId],
    ]);
    expect(audit[audit.length - 1].summary).toEqual({
      endsAt: expect.stringMatching(LOCAL) as unknown,
      granted: { collection: OTHER_TITLE, uids: [p3.uid] },
    });
  });
});

// Two instances on one database need PostgreSQL and Redis.
(multiInstanceAvailable() ? describe : describe.skip)('Seasons on two instances', () => {
  it('the instance that closes the season tells the game server whose socket is on the other', async () => {
    const a = await startTestApp();
    let b: TestApp | null = null;
    try {
      b = await startTestApp({ shareWith: a });
      await putCatalog(a, [911]);
      // The next whole second: a start in the current one is refused as past once the request
      // reaches the service in the next second (a CI flake). The plays wait until it has begun.
      const start = new Date(Math.ceil((Date.now() + 1) / 1_000) * 1_000);
      const created = await a.admin.post('/admin/seasons', {
        slug: 'two-instances',
        name: 'Two instances',
        startsAt: formatLocalDateTime(start),
        endsAt: formatLocalDateTime(new Date(start.getTime() + 3_600_000)),
        closeRule: { collection: TITLE, top: 2 },
      });
      expect(created.status).toBe(201);
      const server = await onlineServer(a);
      const players = [await onlinePlayer(a, server), await onlinePlayer(b, server), await onlinePlayer(a, server)];
      const [first, second, third] = players;
      await sleep(Math.max(0, start.getTime() - Date.now() + 20));
      await play(a, server, first, 911, { acc: 99 });
      await play(b, server, second, 911, { acc: 100 });
      await play(a, server, third, 911, { acc: 95 });
      const socket = await WsClient.connect(b.baseUrl, server.accessToken);
      try {
        socket.send('collection_updates', { enabled: true });
        await socket.next((f) => f.event === 'collection_updates');
        const live = await b.admin.get('/admin/boards/atp', { query: { period: 'season:two-instances' } });
        const after = new Date(start.getTime() + 3_600_000);
        jest.spyOn(a.get(Clock), 'now').mockReturnValue(after);
        jest.spyOn(b.get(Clock), 'now').mockReturnValue(after);
        // a freezes it (the socket is on b); b's run after it finds nothing left to do.
        await a.get(PeriodJobService).runOnce();
        await b.get(PeriodJobService).runOnce();
        const archived = await a.admin.get('/admin/boards/atp', { query: { period: 'season:two-instances' } });
        const liveBody = live.body as { period: Record<string, unknown> };
        expect(archived.body).toEqual({ ...liveBody, period: { ...liveBody.period, closed: true } });
        expect(await owners(a, TITLE)).toEqual([first.uid, second.uid].sort((x, y) => x - y));
        expect(await grantedUids(b, created.body.id as number)).toEqual([first.uid, second.uid].sort((x, y) => x - y));
        await socket.next(() => granted(socket.frames).length >= 2, 5_000);
        expect(
          granted(socket.frames)
            .map((f) => f.data.uid as number)
            .sort((x, y) => x - y),
        ).toEqual([first.uid, second.uid].sort((x, y) => x - y));
        await sleep(300);
        expect(granted(socket.frames)).toHaveLength(2);
      } finally {
        socket.socket.close();
      }
    } finally {
      await b?.close();
      await a.close();
    }
  });
});

// A second connection holding a lock while the service works needs PostgreSQL: the embedded
// database serves its clients' transactions one at a time.
(testDatabaseServerUrl() ? describe : describe.skip)('An early close holds uploads for the close only', () => {
  it('uploads go on while the archive of a closing season waits; a play after the close counts for it no more', async () => {
    const app = await startTestApp();
    const locker = new Client({ connectionString: app.databaseUrl() });
    await locker.connect();
    try {
      await putCatalog(app, [931, 932]);
      // The next whole second, as in 'Seasons on two instances' (one in the current second can be refused as past).
      const start = new Date(Math.ceil((Date.now() + 1) / 1_000) * 1_000);
      const created = await app.admin.post('/admin/seasons', {
        slug: 'held-archive',
        name: 'Held archive',
        startsAt: formatLocalDateTime(start),
        endsAt: formatLocalDateTime(new Date(start.getTime() + 86_400_000)),
        closeRule: { collection: TITLE, top: 1 },
      });
      expect(created.status).toBe(201);
      const id = created.body.id as number;
      await sleep(1_100); // the season has started
      const server = await onlineServer(app);
      const player = await onlinePlayer(app, server);
      await play(app, server, player, 931, { acc: 90 });
      const seasonAtp = () =>
        app.sql('SELECT atp::text AS atp FROM period_rating WHERE period_id = $1 AND uid = $2', [id, player.uid]);
      const before = await seasonAtp();
      expect(before).toHaveLength(1);

      // The archive's insert waits for this lock; readers of the archive do not.
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE period_atp_rank_block IN EXCLUSIVE MODE');
      const closing = app.admin.post(`/admin/seasons/${id}/close`);
      const state = async () =>
        (
          await app.sql<{ closed: boolean; archived: boolean }>(
            'SELECT closed_at IS NOT NULL AS closed, archived_at IS NOT NULL AS archived FROM board_period WHERE id = $1',
            [id],
          )
        )[0];
      for (let i = 0; i < 100 && !(await state()).closed; i++) await sleep(50);
      // The close committed on its own; the archive is waiting.
      expect(await state()).toEqual({ closed: true, archived: false });
      const upload = uploadPlay(app, server, player, gameplayPayload(932, (playTime += 1_000), { acc: 99 }));
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('waited'), 10_000)));
      const outcome = await Promise.race([upload.then(() => 'answered'), waited]);
      clearTimeout(timer);
      expect(outcome).toBe('answered');
      // The play after the close counts for the all-time boards, not for the closed season.
      expect(
        await app.sql('SELECT acc FROM player_chart_best WHERE uid = $1 AND level_id = 932', [player.uid]),
      ).toEqual([{ acc: 99 }]);
      expect(await seasonAtp()).toEqual(before);
      expect(await app.sql('SELECT 1 FROM period_chart_best WHERE period_id = $1 AND level_id = 932', [id])).toEqual(
        [],
      );
      // A second close and a delete while the archive holds the season: 409 at once (they take the
      // period lock every upload waits for, so waiting on the row would hold the uploads too).
      for (const second of [
        () => app.admin.post(`/admin/seasons/${id}/close`),
        () => app.admin.delete(`/admin/seasons/${id}`),
      ]) {
        const answer = await second();
        expect({ status: answer.status, body: answer.body as unknown }).toEqual({
          status: 409,
          body: {
            error: 'CONFLICT',
            message: `Season ${id} is being closed or archived; try again once it is archived`,
          },
        });
      }
      const again = uploadPlay(app, server, player, gameplayPayload(931, (playTime += 1_000), { acc: 91 }));
      const held = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('waited'), 10_000)));
      expect(await Promise.race([again.then(() => 'answered'), held])).toBe('answered');
      clearTimeout(timer);

      await locker.query('ROLLBACK');
      const closed = await closing;
      expect(closed.status).toBe(200);
      expect(closed.body).toEqual({
        season: {
          ...(created.body as object),
          endsAt: expect.stringMatching(LOCAL) as unknown,
          state: 'archived',
          closedAt: expect.stringMatching(LOCAL) as unknown,
        },
        granted: { collection: TITLE, uids: [player.uid] },
      });
      expect(await state()).toEqual({ closed: true, archived: true });
      expect(await grantedUids(app, id)).toEqual([player.uid]);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
      await app.close();
    }
  });
});

describe('A review counts a play again in the open periods (issue #44)', () => {
  it('approve puts a flagged play on the day and season boards, void takes a play off them, in SQL', async () => {
    const app = await startTestApp();
    try {
      await app.get(PeriodJobService).runOnce();
      await app.sql(
        `INSERT INTO board_period (kind, slug, name, starts_at, ends_at)
         VALUES ('season', 'reviewed', 'Reviewed', now() - interval '1 hour', now() + interval '1 day')`,
      );
      const charts = await app.admin.put('/admin/charts', [
        { levelId: 921, name: 'Chart 921', difficultyConstant: 10, version: '1.0', active: true },
      ]);
      expect(charts.status).toBe(200);
      const server = await onlineServer(app);
      const [a, b] = [await onlinePlayer(app, server), await onlinePlayer(app, server)];
      await play(app, server, a, 921, { acc: 100, maxCombo: 99_999 }); // flagged: counts nowhere yet
      await play(app, server, a, 921, { acc: 95 });
      await play(app, server, b, 921, { acc: 97 });
      const [flagged, ninetyFive] = await app.sql<{ id: string }>(
        'SELECT id::text AS id FROM play_record WHERE uid = $1 ORDER BY id',
        [a.uid],
      );
      /** The chart and ATP boards of each period, as [uid, acc] and [uid, atp]; the all-time ATP board beside them. */
      const boards = async () => {
        const read = async (path: string, period: string) =>
          (
            (await app.admin.get(path, { query: { period } })).body as {
              entries: Array<{ uid: number; acc?: number; atp?: number }>;
            }
          ).entries.map((e) => [e.uid, e.acc ?? e.atp]);
        return {
          day: await read('/admin/boards/charts/921', 'day'),
          season: await read('/admin/boards/charts/921', 'season:reviewed'),
          dayAtp: await read('/admin/boards/atp', 'day'),
          seasonAtp: await read('/admin/boards/atp', 'season:reviewed'),
          allTimeAtp: await read('/admin/boards/atp', 'all'),
        };
      };
      const expectBoards = async (chart: Array<[number, number]>) => {
        const read = await boards();
        expect({ day: read.day, season: read.season }).toEqual({ day: chart, season: chart });
        // Every play is inside both periods: their ATP boards equal the all-time board.
        expect({ day: read.dayAtp, season: read.seasonAtp }).toEqual({ day: read.allTimeAtp, season: read.allTimeAtp });
        expect(read.allTimeAtp.map(([uid]) => uid)).toEqual(chart.map(([uid]) => uid));
      };
      await expectBoards([
        [b.uid, 97],
        [a.uid, 95],
      ]);

      expect((await app.admin.post(`/admin/plays/${flagged.id}/approve`)).status).toBe(200);
      await expectBoards([
        [a.uid, 100],
        [b.uid, 97],
      ]);
      const stored = await app.sql<{ kind: string; record_id: string }>(
        `SELECT p.kind, b.record_id::text AS record_id FROM period_chart_best b JOIN board_period p ON p.id = b.period_id
          WHERE b.uid = $1 ORDER BY p.kind`,
        [a.uid],
      );
      expect(stored).toEqual(['day', 'month', 'season', 'week'].map((kind) => ({ kind, record_id: flagged.id })));

      expect((await app.admin.post(`/admin/plays/${flagged.id}/void`, { reason: 'test' })).status).toBe(200);
      await expectBoards([
        [b.uid, 97],
        [a.uid, 95],
      ]);
      expect((await app.admin.post(`/admin/plays/${ninetyFive.id}/void`, { reason: 'test' })).status).toBe(200);
      await expectBoards([[b.uid, 97]]);
      expect(
        await app.sql(
          'SELECT (SELECT count(*)::int FROM period_chart_best WHERE uid = $1) AS bests, (SELECT count(*)::int FROM period_rating WHERE uid = $1) AS ratings',
          [a.uid],
        ),
      ).toEqual([{ bests: 0, ratings: 0 }]);
      expect((await app.admin.post(`/admin/plays/${ninetyFive.id}/restore`)).status).toBe(200);
      await expectBoards([
        [b.uid, 97],
        [a.uid, 95],
      ]);
    } finally {
      await app.close();
    }
  });
});
