import { Client } from 'pg';
import { testDatabaseServerUrl } from '../setup/test-env';
import { createPlayer, onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer } from '../factories/server.factory';
import { startTestApp, TestApp } from '../support/test-app';
import { badLines } from '../support/bad-request';

type OnlineServer = Awaited<ReturnType<typeof onlineServer>>;

const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
const MAX_LONG = Number.MAX_SAFE_INTEGER;

describe('Economy: POST /player/economy and GET /admin/players/{uid}/economy', () => {
  let app: TestApp;
  let server: OnlineServer;
  let player: TestPlayerSession;

  beforeAll(async () => {
    app = await startTestApp();
    server = await onlineServer(app);
  });
  afterAll(async () => {
    await app.close();
  });
  beforeEach(async () => {
    player = await onlinePlayer(app, server);
  });

  const economy = (body: Record<string, unknown>, token: string | null = server.accessToken) =>
    app.http.post('/player/economy', body, { token });
  const balance = async (uid: number) =>
    app.sql('SELECT watt_hour, updated_at IS NOT NULL AS has_time FROM player_balance WHERE uid = $1', [uid]);
  const history = async (uid: number) =>
    app.sql<{ previous_watt_hour: string | null; watt_hour: string; server_id: number | null }>(
      'SELECT previous_watt_hour, watt_hour, server_id FROM balance_history WHERE uid = $1 ORDER BY id',
      [uid],
    );

  describe('POST /player/economy', () => {
    it('stores the balance, answers it, and records the change', async () => {
      const response = await economy({ uid: player.uid, accessToken: player.accessToken, wattHour: 1500 });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ uid: player.uid, wattHour: 1500 });
      expect(await balance(player.uid)).toEqual([{ watt_hour: '1500', has_time: true }]);
      expect(await history(player.uid)).toEqual([
        { previous_watt_hour: null, watt_hour: '1500', server_id: server.serverID },
      ]);
    });

    it('overwrites with the value sent, without arithmetic, and records every change', async () => {
      for (const wattHour of [100, 40, 40, 0]) {
        const response = await economy({ uid: player.uid, accessToken: player.accessToken, wattHour });
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ uid: player.uid, wattHour });
      }
      expect(await balance(player.uid)).toEqual([{ watt_hour: '0', has_time: true }]);
      expect(await history(player.uid)).toEqual([
        { previous_watt_hour: null, watt_hour: '100', server_id: server.serverID },
        { previous_watt_hour: '100', watt_hour: '40', server_id: server.serverID },
        { previous_watt_hour: '40', watt_hour: '0', server_id: server.serverID },
      ]);
    });

    it('answers a sync of the stored balance with nothing written: no history row, no new time, no row lock', async () => {
      expect((await economy({ uid: player.uid, accessToken: player.accessToken, wattHour: 250 })).status).toBe(200);
      await app.sql("UPDATE player_balance SET updated_at = '2026-01-01T00:00:00Z' WHERE uid = $1", [player.uid]);
      const row = () =>
        app.sql<{ watt_hour: string; updated_at: Date; xmin: string; xmax: string }>(
          'SELECT watt_hour, updated_at, xmin::text, xmax::text FROM player_balance WHERE uid = $1',
          [player.uid],
        );
      const [before] = await row();
      expect(before.xmax).toBe('0');

      for (const body of [{ wattHour: 250 }, { wattHour: 250, expectedWattHour: 250 }]) {
        const response = await economy({ uid: player.uid, accessToken: player.accessToken, ...body });
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ uid: player.uid, wattHour: 250 });
      }

      expect(await history(player.uid)).toEqual([
        { previous_watt_hour: null, watt_hour: '250', server_id: server.serverID },
      ]);
      // The same row version, never locked (FOR UPDATE would have set xmax), the time untouched.
      expect(await row()).toEqual([
        { watt_hour: '250', updated_at: new Date('2026-01-01T00:00:00Z'), xmin: before.xmin, xmax: '0' },
      ]);
    });

    // The embedded database is one session: no second connection can hold the row.
    (testDatabaseServerUrl() ? it : it.skip)(
      'waits for a change in flight before answering a sync of the stored value, and then writes it',
      async () => {
        expect((await economy({ uid: player.uid, accessToken: player.accessToken, wattHour: 5 })).status).toBe(200);
        const other = new Client({ connectionString: app.env.DATABASE_URL });
        await other.connect();
        try {
          // A change to 7 in flight (sent first): the row is held.
          await other.query('BEGIN');
          await other.query('SELECT 1 FROM player_balance WHERE uid = $1 FOR UPDATE', [player.uid]);
          let answered = false;
          const sync = economy({ uid: player.uid, accessToken: player.accessToken, wattHour: 5 }).then((response) => {
            answered = true;
            return response;
          });
          await new Promise((resolve) => setTimeout(resolve, 400));
          expect(answered).toBe(false);
          await other.query('UPDATE player_balance SET watt_hour = 7 WHERE uid = $1', [player.uid]);
          await other.query('COMMIT');
          const response = await sync;
          expect(response.status).toBe(200);
          expect(response.body).toEqual({ uid: player.uid, wattHour: 5 });
        } finally {
          await other.end();
        }
        // The sync sent last holds, and its change is in the history.
        expect(await balance(player.uid)).toEqual([{ watt_hour: '5', has_time: true }]);
        expect(await history(player.uid)).toEqual([
          { previous_watt_hour: null, watt_hour: '5', server_id: server.serverID },
          { previous_watt_hour: '7', watt_hour: '5', server_id: server.serverID },
        ]);
      },
    );

    it('still answers 409 when the stored balance is the value sent but not the one expected', async () => {
      expect((await economy({ uid: player.uid, accessToken: player.accessToken, wattHour: 80 })).status).toBe(200);
      const response = await economy({
        uid: player.uid,
        accessToken: player.accessToken,
        wattHour: 80,
        expectedWattHour: 70,
      });
      expect(response.status).toBe(409);
      expect(response.body).toEqual({
        error: 'CONFLICT',
        message: 'The balance is 80, not the expected 70; nothing was changed',
        wattHour: 80,
      });
      expect(await history(player.uid)).toHaveLength(1);
    });

    it('keeps a long exactly up to 2^53 - 1', async () => {
      const response = await economy({ uid: player.uid, accessToken: player.accessToken, wattHour: MAX_LONG });
      expect(response.status).toBe(200);
      expect(response.text).toBe(`{"uid":${player.uid},"wattHour":9007199254740991}`);
      expect(await balance(player.uid)).toEqual([{ watt_hour: '9007199254740991', has_time: true }]);
    });

    it('accepts the uid as a string of digits', async () => {
      const response = await economy({ uid: String(player.uid), accessToken: player.accessToken, wattHour: 7 });
      expect(response.body).toEqual({ uid: player.uid, wattHour: 7 });
    });

    it.each([
      ['a missing uid', { uid: undefined }, 'uid must be a positive integer'],
      ['a missing accessToken', { accessToken: undefined }, 'accessToken must be a string'],
      ['a missing wattHour', { wattHour: undefined }, 'wattHour must be an integer'],
      ['a negative wattHour', { wattHour: -1 }, 'wattHour must not be below 0'],
      ['a fractional wattHour', { wattHour: 1.5 }, 'wattHour must be an integer'],
      ['a wattHour as a string', { wattHour: '5' }, 'wattHour must be an integer'],
      ['a wattHour above 2^53 - 1', { wattHour: 2 ** 53 }, 'wattHour must not be above 9007199254740991'],
      ['a uid of zero', { uid: 0 }, 'uid must be a positive integer'],
    ])('answers 400 for %s', async (_label, change, message) => {
      const response = await economy({ uid: player.uid, accessToken: player.accessToken, wattHour: 10, ...change });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('BAD_REQUEST');
      expect(response.body.message).toContain(message);
      expect(await balance(player.uid)).toEqual([]);
    });

    it('answers 404 when no player has the uid', async () => {
      const response = await economy({ uid: 987654321987, accessToken: player.accessToken, wattHour: 10 });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'No player with uid 987654321987' });
    });

    it('answers 401 for an unknown token, a token of another uid, and a logged-out token', async () => {
      const other = await onlinePlayer(app, server);
      expect((await economy({ uid: player.uid, accessToken: 'nope', wattHour: 1 })).body).toEqual({
        error: 'UNAUTHORIZED',
        message: 'Invalid or expired player access token',
      });
      expect((await economy({ uid: player.uid, accessToken: other.accessToken, wattHour: 1 })).body).toEqual({
        error: 'UNAUTHORIZED',
        message: 'The access token does not belong to this uid',
      });
      await app.http.post(
        '/player/logout',
        { uid: other.uid, accessToken: other.accessToken },
        { token: server.accessToken },
      );
      expect((await economy({ uid: other.uid, accessToken: other.accessToken, wattHour: 1 })).status).toBe(401);
      expect(await balance(player.uid)).toEqual([]);
      expect(await balance(other.uid)).toEqual([]);
    });

    it('answers 401 for a player token of another server session', async () => {
      const otherServer = await onlineServer(app);
      const response = await economy(
        { uid: player.uid, accessToken: player.accessToken, wattHour: 1 },
        otherServer.accessToken,
      );
      expect(response.status).toBe(401);
      expect(response.body).toEqual({
        error: 'UNAUTHORIZED',
        message: 'The player session belongs to another server session',
      });
      expect(await balance(player.uid)).toEqual([]);
    });

    it('answers 401 without a server token', async () => {
      expect((await economy({ uid: player.uid, accessToken: player.accessToken, wattHour: 1 }, null)).status).toBe(401);
    });

    it('keeps one history row per change and a consistent chain under concurrent calls', async () => {
      const values = Array.from({ length: 12 }, (_, i) => 1000 + i * 7);
      const responses = await Promise.all(
        values.map((wattHour) => economy({ uid: player.uid, accessToken: player.accessToken, wattHour })),
      );
      expect(responses.map((r) => r.status)).toEqual(values.map(() => 200));

      const rows = await history(player.uid);
      expect(rows).toHaveLength(values.length);
      expect(rows.map((r) => Number(r.watt_hour)).sort((a, b) => a - b)).toEqual(values);
      // Each change replaced exactly the value the one before it stored.
      expect(rows[0].previous_watt_hour).toBeNull();
      rows.slice(1).forEach((row, i) => expect(row.previous_watt_hour).toBe(rows[i].watt_hour));
      const [stored] = await balance(player.uid);
      expect(values).toContain(Number(stored.watt_hour));
      expect(stored.watt_hour).toBe(rows[rows.length - 1].watt_hour);
    });

    it('records no unchanged value when concurrent calls send the same balances', async () => {
      const values = Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? 500 : 900));
      const responses = await Promise.all(
        values.map((wattHour) => economy({ uid: player.uid, accessToken: player.accessToken, wattHour })),
      );
      expect(responses.map((r) => r.status)).toEqual(values.map(() => 200));

      const rows = await history(player.uid);
      expect(rows[0].previous_watt_hour).toBeNull();
      // A chain of changes: each row replaced the row before's value with another one.
      rows.slice(1).forEach((row, i) => {
        expect(row.previous_watt_hour).toBe(rows[i].watt_hour);
        expect(row.watt_hour).not.toBe(row.previous_watt_hour);
      });
      const [stored] = await balance(player.uid);
      expect(stored.watt_hour).toBe(rows[rows.length - 1].watt_hour);
    });

    describe('ordered writes (expectedWattHour)', () => {
      const cas = (wattHour: number, expectedWattHour: number | null) =>
        economy({ uid: player.uid, accessToken: player.accessToken, wattHour, expectedWattHour });

      it('writes when the stored balance is the expected one; a player never synced holds 0', async () => {
        expect((await cas(100, 0)).body).toEqual({ uid: player.uid, wattHour: 100 });
        const second = await cas(250, 100);
        expect(second.status).toBe(200);
        expect(second.body).toEqual({ uid: player.uid, wattHour: 250 });
        expect(await history(player.uid)).toEqual([
          { previous_watt_hour: null, watt_hour: '100', server_id: server.serverID },
          { previous_watt_hour: '100', watt_hour: '250', server_id: server.serverID },
        ]);
      });

      it('answers 409 CONFLICT with the stored balance and changes nothing when it differs', async () => {
        const first = await cas(100, 5);
        expect(first.status).toBe(409);
        expect(first.body).toEqual({
          error: 'CONFLICT',
          message: 'The balance is 0, not the expected 5; nothing was changed',
          wattHour: 0,
        });
        expect(await balance(player.uid)).toEqual([]);

        expect((await cas(300, 0)).status).toBe(200);
        const stale = await cas(400, 100);
        expect(stale.status).toBe(409);
        expect(stale.body).toEqual({
          error: 'CONFLICT',
          message: 'The balance is 300, not the expected 100; nothing was changed',
          wattHour: 300,
        });
        expect(await balance(player.uid)).toEqual([{ watt_hour: '300', has_time: true }]);
        expect(await history(player.uid)).toHaveLength(1);
      });

      it('treats null as absent (the overwrite), and checks the field type', async () => {
        expect((await cas(70, null)).body).toEqual({ uid: player.uid, wattHour: 70 });
        for (const [value, message] of [
          [1.5, 'expectedWattHour must be an integer'],
          [
            '100',
            'expectedWattHour must not be above 9007199254740991; expectedWattHour must not be below 0; expectedWattHour must be an integer',
          ],
          [-1, 'expectedWattHour must not be below 0'],
        ] as const) {
          const response = await economy({
            uid: player.uid,
            accessToken: player.accessToken,
            wattHour: 1,
            expectedWattHour: value,
          });
          expect(response.status).toBe(400);
          expect(response.body).toEqual(badLines(...message.split('; ')));
        }
        expect(await balance(player.uid)).toEqual([{ watt_hour: '70', has_time: true }]);
      });

      it('lets exactly one of two concurrent writers with the same expectation win; the other learns the winner', async () => {
        expect((await cas(1000, 0)).status).toBe(200);
        const answers = await Promise.all([cas(1100, 1000), cas(1200, 1000), cas(1300, 1000), cas(1400, 1000)]);
        const won = answers.filter((a) => a.status === 200);
        const lost = answers.filter((a) => a.status === 409);
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(3);
        const winner = won[0].body.wattHour as number;
        for (const answer of lost)
          expect(answer.body).toEqual({
            error: 'CONFLICT',
            message: `The balance is ${winner}, not the expected 1000; nothing was changed`,
            wattHour: winner,
          });
        expect(await balance(player.uid)).toEqual([{ watt_hour: String(winner), has_time: true }]);
        expect(await history(player.uid)).toEqual([
          { previous_watt_hour: null, watt_hour: '1000', server_id: server.serverID },
          { previous_watt_hour: '1000', watt_hour: String(winner), server_id: server.serverID },
        ]);
      });
    });

    it('keeps the balance across a restart', async () => {
      await economy({ uid: player.uid, accessToken: player.accessToken, wattHour: 321 });
      await app.restart();
      expect(await balance(player.uid)).toEqual([{ watt_hour: '321', has_time: true }]);
      const admin = await app.admin.get(`/admin/players/${player.uid}/economy`);
      expect(admin.body.wattHour).toBe(321);
    });
  });

  describe('GET /admin/players/{uid}/economy', () => {
    it('answers the balance and its history, newest first', async () => {
      for (const wattHour of [10, 20, 30])
        await economy({ uid: player.uid, accessToken: player.accessToken, wattHour });
      const response = await app.admin.get(`/admin/players/${player.uid}/economy`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        uid: player.uid,
        wattHour: 30,
        updatedAt: expect.stringMatching(LOCAL_DATE_TIME),
        history: [
          {
            id: expect.any(Number),
            previousWattHour: 20,
            wattHour: 30,
            serverID: server.serverID,
            time: expect.stringMatching(LOCAL_DATE_TIME),
          },
          {
            id: expect.any(Number),
            previousWattHour: 10,
            wattHour: 20,
            serverID: server.serverID,
            time: expect.stringMatching(LOCAL_DATE_TIME),
          },
          {
            id: expect.any(Number),
            previousWattHour: null,
            wattHour: 10,
            serverID: server.serverID,
            time: expect.stringMatching(LOCAL_DATE_TIME),
          },
        ],
        nextBefore: null,
      });
      const ids = (response.body as { history: { id: number }[] }).history.map((h) => h.id);
      expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    });

    it('pages with limit and before', async () => {
      type Page = { history: { id: number; wattHour: number }[]; nextBefore: number | null };
      const page = async (query: Record<string, number>) =>
        (await app.admin.get<Page>(`/admin/players/${player.uid}/economy`, { query })).body;
      for (const wattHour of [1, 2, 3, 4, 5])
        await economy({ uid: player.uid, accessToken: player.accessToken, wattHour });
      const first = await page({ limit: 2 });
      expect(first.history.map((h) => h.wattHour)).toEqual([5, 4]);
      expect(first.nextBefore).toBe(first.history[1].id);
      const second = await page({ limit: 2, before: first.nextBefore as number });
      expect(second.history.map((h) => h.wattHour)).toEqual([3, 2]);
      const third = await page({ limit: 2, before: second.nextBefore as number });
      expect(third.history.map((h) => h.wattHour)).toEqual([1]);
      expect(third.nextBefore).toBeNull();
    });

    it('answers null and an empty history for a player who never synced', async () => {
      const fresh = await createPlayer(app);
      const response = await app.admin.get(`/admin/players/${fresh.uid}/economy`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ uid: fresh.uid, wattHour: null, updatedAt: null, history: [], nextBefore: null });
    });

    it('answers 404 for an unknown player, 400 for a bad uid or paging value, 401 without the admin token', async () => {
      expect((await app.admin.get('/admin/players/987654321987/economy')).body).toEqual({
        error: 'NOT_FOUND',
        message: 'No player with uid 987654321987',
      });
      expect((await app.admin.get('/admin/players/abc/economy')).body).toEqual(
        badLines('uid must be a positive integer'),
      );
      expect((await app.admin.get(`/admin/players/${player.uid}/economy`, { query: { limit: 501 } })).body).toEqual(
        badLines('limit must be an integer from 1 to 500'),
      );
      expect((await app.admin.get(`/admin/players/${player.uid}/economy`, { query: { before: 'x' } })).body).toEqual(
        badLines('before must be an integer from 1 to 9007199254740991'),
      );
      expect((await app.admin.get(`/admin/players/${player.uid}/economy`, { query: { after: '1' } })).body).toEqual(
        badLines('after: property after should not exist'),
      );
      expect((await app.http.get(`/admin/players/${player.uid}/economy`)).status).toBe(401);
      expect((await app.http.get(`/admin/players/${player.uid}/economy`, { token: server.accessToken })).status).toBe(
        401,
      );
    });
  });
});

describe('Economy: GET /server/baltop', () => {
  // A dedicated database: the ranking is global, so every balance in it is this block's.
  let app: TestApp;
  let server: OnlineServer;

  beforeAll(async () => {
    app = await startTestApp();
    server = await onlineServer(app);
  });
  afterAll(async () => {
    await app.close();
  });

  const baltop = (query?: Record<string, string | number>, token: string | null = server.accessToken) =>
    app.http.get('/server/baltop', { token, query });

  async function playerWith(wattHour: number, displayName?: string): Promise<TestPlayerSession> {
    const player = await onlinePlayer(app, server, displayName === undefined ? {} : { displayName });
    const response = await app.http.post(
      '/player/economy',
      { uid: player.uid, accessToken: player.accessToken, wattHour },
      { token: server.accessToken },
    );
    if (response.status !== 200) throw new Error(`economy: ${response.status} ${response.text}`);
    return player;
  }

  const entry = (rank: number, player: TestPlayerSession, wattHour: number, displayName = player.username) => ({
    rank,
    uid: player.uid,
    username: player.username,
    displayName,
    wattHour,
  });

  let rich: TestPlayerSession;
  let tieLow: TestPlayerSession;
  let tieHigh: TestPlayerSession;
  let named: TestPlayerSession;
  let rest: TestPlayerSession[];

  it('answers an empty ranking while nobody synced a balance', async () => {
    await createPlayer(app);
    const response = await baltop();
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
  });

  it('orders by wattHour descending then uid ascending, 10 by default, displayName falling back to username', async () => {
    rich = await playerWith(MAX_LONG);
    // Created in this order, so tieLow has the smaller uid; both have the same balance.
    tieLow = await playerWith(5000);
    tieHigh = await playerWith(5000);
    named = await playerWith(4000, 'Shiny');
    rest = [];
    for (let i = 0; i < 8; i++) rest.push(await playerWith(100 + i));
    await createPlayer(app); // never synced: not ranked

    const response = await baltop();
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      entry(1, rich, MAX_LONG),
      entry(2, tieLow, 5000),
      entry(3, tieHigh, 5000),
      entry(4, named, 4000, 'Shiny'),
      ...rest
        .slice(2)
        .reverse()
        .map((player, i) => entry(5 + i, player, 107 - i)),
    ]);
    expect(tieLow.uid).toBeLessThan(tieHigh.uid);
  });

  it('honours limit from 1 to 100', async () => {
    expect((await baltop({ limit: 1 })).body).toEqual([entry(1, rich, MAX_LONG)]);
    const all = await app.http.get<{ rank: number }[]>('/server/baltop', {
      token: server.accessToken,
      query: { limit: 100 },
    });
    expect(all.body).toHaveLength(12);
    expect(all.body.map((e) => e.rank)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(all.body[11]).toEqual(entry(12, rest[0], 100));
  });

  it('follows balance updates', async () => {
    await app.http.post(
      '/player/economy',
      { uid: rest[0].uid, accessToken: rest[0].accessToken, wattHour: 4500 },
      { token: server.accessToken },
    );
    expect((await baltop({ limit: 5 })).body).toEqual([
      entry(1, rich, MAX_LONG),
      entry(2, tieLow, 5000),
      entry(3, tieHigh, 5000),
      entry(4, rest[0], 4500),
      entry(5, named, 4000, 'Shiny'),
    ]);
  });

  it('leaves a banned player out until the ban is lifted or over', async () => {
    expect((await app.admin.post(`/admin/players/${tieLow.uid}/ban`, { reason: 'cheating' })).status).toBe(200);
    expect((await baltop({ limit: 3 })).body).toEqual([
      entry(1, rich, MAX_LONG),
      entry(2, tieHigh, 5000),
      entry(3, rest[0], 4500),
    ]);

    expect((await app.admin.delete(`/admin/players/${tieLow.uid}/ban`)).status).toBe(204);
    expect((await baltop({ limit: 3 })).body).toEqual([
      entry(1, rich, MAX_LONG),
      entry(2, tieLow, 5000),
      entry(3, tieHigh, 5000),
    ]);

    // A temporary ban whose end has passed no longer hides the player.
    const until = new Date(Date.now() + 3_600_000);
    const pad = (n: number) => String(n).padStart(2, '0');
    const local = `${until.getFullYear()}-${pad(until.getMonth() + 1)}-${pad(until.getDate())}T${pad(until.getHours())}:${pad(until.getMinutes())}:${pad(until.getSeconds())}`;
    expect((await app.admin.post(`/admin/players/${rich.uid}/ban`, { until: local })).status).toBe(200);
    expect((await baltop({ limit: 1 })).body).toEqual([entry(1, tieLow, 5000)]);
    await app.sql(`UPDATE player_ban SET until = now() - interval '1 second' WHERE uid = $1 AND lifted_at IS NULL`, [
      rich.uid,
    ]);
    expect((await baltop({ limit: 1 })).body).toEqual([entry(1, rich, MAX_LONG)]);
  });

  it.each(['0', '101', 'abc', '1.5', '', '-1', '1e1', ' 5'])('answers 400 for limit=%j', async (limit) => {
    const response = await baltop({ limit });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(badLines('limit must be an integer from 1 to 100'));
  });

  it('answers 400 for a repeated limit', async () => {
    const response = await app.http.get('/server/baltop?limit=1&limit=2', { token: server.accessToken });
    expect(response.body).toEqual(badLines('limit must be an integer from 1 to 100'));
  });

  it('ignores an unknown parameter (a plugin route: decisions.md "Plugin input") and keeps checking limit', async () => {
    const all = await baltop();
    const response = await app.http.get('/server/baltop?top=3&_=1700000000000', { token: server.accessToken });
    expect({ status: response.status, body: response.body as unknown }).toEqual({ status: 200, body: all.body });
    const limited = await app.http.get('/server/baltop?limit=1&valueOf=x', { token: server.accessToken });
    expect({ status: limited.status, body: limited.body as unknown }).toEqual({
      status: 200,
      body: (all.body as unknown[]).slice(0, 1),
    });
    expect((await app.http.get('/server/baltop?limit=0&top=3', { token: server.accessToken })).body).toEqual(
      badLines('limit must be an integer from 1 to 100'),
    );
  });

  it('answers 401 without a live server token', async () => {
    expect((await baltop(undefined, null)).body).toEqual({
      error: 'UNAUTHORIZED',
      message: 'Missing bearer server access token',
    });
    expect((await baltop(undefined, 'nope')).status).toBe(401);
  });
});
