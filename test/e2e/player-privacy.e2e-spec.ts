import { createPlayer, onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { Client } from 'pg';
import { testDatabaseServerUrl } from '../setup/test-env';
import { WsClient } from '../support/ws-client';
import { multiInstanceAvailable, startTestApp, TestApp, TestClients } from '../support/test-app';
import { mappedPlayerColumns, PLAYER_DATA } from '../../src/privacy/player-data.map';
import { EXPORT_FORMAT } from '../../src/privacy/privacy.service';
import { SNAPSHOT_LOCK_KEY } from '../../src/upload/history/rating-history.repository';
import { badLines } from '../support/bad-request';

/**
 * Every column that refers to a player: a foreign key to player, or a column named uid, …_uid,
 * uuid or username (the schema test of docs/decisions.md "Erasing a player").
 */
const REFERRING_COLUMNS = `
  SELECT c.conrelid::regclass::text || '.' || a.attname AS col
    FROM pg_constraint c
    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
   WHERE c.contype = 'f' AND c.confrelid = 'player'::regclass
  UNION
  SELECT table_name || '.' || column_name
    FROM information_schema.columns
   WHERE table_schema = current_schema() AND column_name ~ '(^|_)(uid|uuid|username)$'
  ORDER BY 1`;

async function unlistedColumns(app: TestApp): Promise<string[]> {
  const mapped = mappedPlayerColumns();
  return (await app.sql<{ col: string }>(REFERRING_COLUMNS)).map((r) => r.col).filter((col) => !mapped.has(col));
}

// Recent: an old play fails the age check and counts for nothing.
let time = Date.now() - 3_600_000;
async function upload(
  app: TestClients,
  server: TestServerSession,
  player: TestPlayerSession,
  levelID: number,
  acc: number,
) {
  const payload = gameplayPayload(levelID, (time += 1_000), { acc });
  return app.http.post(
    '/player/upload',
    {
      player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: payload.time },
      server: { serverID: server.serverID, serverName: 'privacy', country: 'DE' },
      payload,
    },
    { token: server.accessToken },
  );
}

describe('Privacy: export and erase a player', () => {
  let app: TestApp;
  let server: TestServerSession;

  beforeAll(async () => {
    app = await startTestApp();
    server = await onlineServer(app);
    await defineCharts(app, [701, 702]);
  });
  afterAll(() => app.close());

  describe('the schema test', () => {
    it('every column that refers to a player is in the export and erase map, and every mapped column exists', async () => {
      expect(await unlistedColumns(app)).toEqual([]);
      const existing = new Set(
        (
          await app.sql<{ col: string }>(
            `SELECT table_name || '.' || column_name AS col FROM information_schema.columns WHERE table_schema = current_schema()`,
          )
        ).map((r) => r.col),
      );
      expect([...mappedPlayerColumns()].filter((col) => !existing.has(col))).toEqual([]);
    });

    it('fails for a new table that refers to players without an entry', async () => {
      await app.sql(
        'CREATE TABLE privacy_probe (id int PRIMARY KEY, owner bigint REFERENCES player (uid), friend_uid bigint)',
      );
      try {
        expect(await unlistedColumns(app)).toEqual(['privacy_probe.friend_uid', 'privacy_probe.owner']);
      } finally {
        await app.sql('DROP TABLE privacy_probe');
      }
    });
  });

  it('exports every row of a player, then erases them in one go: ranks of others move, the name is free, audit rows carry a pseudonym, uploads are refused', async () => {
    const a = await onlinePlayer(app, server, { displayName: 'Alice A.' });
    const b = await onlinePlayer(app, server);
    const c = await onlinePlayer(app, server);
    // a leads the site and chart 701; b second; c third. c names a as rival once.
    expect((await upload(app, server, a, 701, 100)).status).toBe(200);
    expect((await upload(app, server, a, 702, 99.5)).status).toBe(200);
    expect((await upload(app, server, b, 701, 99.5)).status).toBe(200);
    const rivalPayload = gameplayPayload(701, (time += 1_000), {
      acc: 99,
      isRival: true,
      rivalUID: a.uid,
      rivalAcc: 100,
    });
    expect(
      (
        await app.http.post(
          '/player/upload',
          {
            player: { playerUID: c.uid, accessToken: c.accessToken, timestamp: rivalPayload.time },
            server: { serverID: server.serverID, serverName: 'privacy', country: 'DE' },
            payload: rivalPayload,
          },
          { token: server.accessToken },
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await app.http.post(
          '/player/economy',
          { uid: a.uid, accessToken: a.accessToken, wattHour: 1500 },
          { token: server.accessToken },
        )
      ).status,
    ).toBe(200);
    expect((await app.admin.put(`/admin/players/${a.uid}/banstate`, { banstate: 2 })).status).toBe(200);

    const before = await upload(app, server, c, 701, 98.5);
    expect(before.body).toMatchObject({ siteRank: 3, trackRank: 3 });

    // The export: one document, exact rows.
    const exported = await app.admin.post(`/admin/players/${a.uid}/export`);
    expect(exported.status).toBe(200);
    expect(exported.body).toMatchObject({ format: EXPORT_FORMAT, uid: a.uid });
    const tables = exported.body.tables as Record<string, Array<Record<string, unknown>>>;
    expect(Object.keys(tables).sort()).toEqual(
      PLAYER_DATA.filter((e) => !('none' in e.export))
        .map((e) => e.key)
        .sort(),
    );
    expect(tables.player).toEqual([
      expect.objectContaining({ uid: String(a.uid), username: a.username, display_name: 'Alice A.', banstate: 2 }),
    ]);
    expect(tables.plays.map((p) => [p.level_id, p.acc])).toEqual([
      [701, 100],
      [702, 99.5],
    ]);
    expect(tables.bests.map((p) => [p.level_id, p.acc])).toEqual([
      [701, 100],
      [702, 99.5],
    ]);
    expect(tables.rating).toEqual([{ atp: expect.any(String), version: expect.any(String) }]);
    expect(tables.balance).toEqual([{ watt_hour: '1500', updated_at: expect.any(String) }]);
    expect(tables.balanceHistory).toEqual([
      expect.objectContaining({ previous_watt_hour: null, watt_hour: '1500', server_id: server.serverID }),
    ]);
    expect(tables.sessions).toEqual([expect.objectContaining({ mode: 'TOKEN', logged_out_at: null })]);
    expect(tables.sessions[0]).not.toHaveProperty('token_hash');
    expect(tables.netToken).toEqual([{ issued_at: expect.any(String) }]);
    expect(tables.playsAsRival).toEqual([expect.objectContaining({ level_id: 701, rival_acc: 100 })]);
    expect(tables.playsAsRival[0]).not.toHaveProperty('uid');
    expect(tables.auditRows.map((r) => [r.action, r.target])).toEqual([
      ['player.create', `player:${a.uid}`],
      ['player.net-token', `player:${a.uid}`],
      ['player.banstate', `player:${a.uid}`],
    ]);
    const [exportAudit] = await app.sql(`SELECT action, target, summary FROM admin_audit ORDER BY id DESC LIMIT 1`);
    expect(exportAudit).toEqual({ action: 'player.export', target: `player:${a.uid}`, summary: {} });

    // A wrong confirmation changes nothing.
    const refused = await app.admin.post(`/admin/players/${a.uid}/erase`, { confirm: a.username.toUpperCase() });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(badLines("confirm must be the player's current username, exactly"));
    expect(await app.sql('SELECT uid FROM player WHERE uid = $1', [a.uid])).toHaveLength(1);

    const erased = await app.admin.post(`/admin/players/${a.uid}/erase`, { confirm: a.username });
    expect(erased.status).toBe(200);
    const pseudonym = erased.body.pseudonym as string;
    expect(pseudonym).toMatch(/^erased-[0-9a-f]{12}$/);
    expect(erased.body).toEqual({
      uid: a.uid,
      pseudonym,
      rows: {
        sessionTakeovers: 0,
        sessions: 1,
        netToken: 1,
        resumeToken: 0,
        collections: 0,
        balanceHistory: 1,
        balance: 1,
        bans: 0,
        bests: 2,
        rating: 1,
        ratingHistory: 0,
        // Two charts in each open period: the day, the week and the month.
        periodBests: 6,
        periodRatings: 3,
        periodAtpArchiveRanks: 0,
        periodAtpArchiveUids: 0,
        periodChartArchiveRanks: 0,
        periodChartArchiveUids: 0,
        seasonGrants: 0,
        plays: 2,
        playsAsRival: 1,
        pendingKicks: 0,
        webhookDeliveries: 0,
        auditRows: 4,
        player: 1,
      },
    });

    // Nothing names the uid or the name any more, but the tombstone and the rank bookkeeping.
    for (const entry of PLAYER_DATA) {
      if ('keep' in entry.erase) continue;
      expect([
        entry.key,
        await app.sql(`SELECT 1 FROM "${entry.table}" WHERE ${entry.where}`, [String(a.uid)]),
      ]).toEqual([entry.key, []]);
    }
    expect(await app.sql('SELECT uid::int, pseudonym FROM player_erasure')).toEqual([{ uid: a.uid, pseudonym }]);
    const audit = await app.sql<{ action: string; target: string; summary: Record<string, unknown> }>(
      `SELECT action, target, summary FROM admin_audit WHERE target LIKE 'player:erased-%' ORDER BY id`,
    );
    expect(audit).toEqual([
      { action: 'player.create', target: `player:${pseudonym}`, summary: { player: pseudonym } },
      { action: 'player.net-token', target: `player:${pseudonym}`, summary: { player: pseudonym } },
      { action: 'player.banstate', target: `player:${pseudonym}`, summary: { banstate: 2, player: pseudonym } },
      { action: 'player.export', target: `player:${pseudonym}`, summary: { player: pseudonym } },
      { action: 'player.erase', target: `player:${pseudonym}`, summary: { rows: erased.body.rows } },
    ]);
    const everything = JSON.stringify(await app.sql('SELECT * FROM admin_audit'));
    expect(everything).not.toContain(a.username);
    expect(everything).not.toContain(`player:${a.uid}"`);
    // The other player's rival play stays, without the erased uid.
    expect(await app.sql('SELECT rival_uid::int FROM play_record WHERE uid = $1 AND is_rival', [c.uid])).toEqual([
      { rival_uid: 0 },
    ]);

    // Ranks of the others move up by one, exactly.
    const after = await upload(app, server, c, 701, 98.4);
    expect(after.body).toMatchObject({ siteRank: 2, trackRank: 2 });
    const bAfter = await upload(app, server, b, 702, 90);
    expect(bAfter.body).toMatchObject({ siteRank: 1, trackRank: 1 });
    const board = await app.admin.get('/admin/leaderboards/701');
    if (board.status === 200) expect(JSON.stringify(board.body)).not.toContain(a.username);

    // The erased player's session is gone: an upload is refused with a clear 401, nothing stored.
    const late = await upload(app, server, a, 701, 100);
    expect(late.status).toBe(401);
    expect(late.body).toEqual({
      error: 'UNAUTHORIZED',
      message: `Player ${a.uid} was erased: nothing is stored for this uid`,
    });
    expect(await app.sql('SELECT 1 FROM play_record WHERE uid = $1', [a.uid])).toEqual([]);
    // Its Net Token is gone too.
    const relogin = await app.http.post(
      '/player/login',
      { mode: 'TOKEN', version: 1, authToken: a.netToken },
      { token: server.accessToken },
    );
    expect(relogin.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid Net Token' });

    // Export and erase of the erased uid: 404 that says so; no audit row for a refusal.
    const again = await app.admin.post(`/admin/players/${a.uid}/export`);
    expect(again.status).toBe(404);
    expect(again.body.message).toMatch(new RegExp(`^Player ${a.uid} was erased at \\d{4}-`));
    expect((await app.admin.post(`/admin/players/${a.uid}/erase`, { confirm: a.username })).status).toBe(404);

    // The name is free: another player may take it.
    const taker = await createPlayer(app, { username: a.username });
    expect(taker.uid).not.toBe(a.uid);
  });

  it('kicks the erased player off the game server they are on', async () => {
    const player = await onlinePlayer(app, server);
    const socket = await WsClient.connect(app.baseUrl, server.accessToken);
    try {
      expect((await app.admin.post(`/admin/players/${player.uid}/erase`, { confirm: player.username })).status).toBe(
        200,
      );
      expect(await socket.next((frame) => frame.event === 'kick_player')).toEqual({
        event: 'kick_player',
        data: { uid: player.uid, message: 'Your account was erased', reason: 'erased', until: '' },
      });
    } finally {
      socket.socket.terminate();
    }
  });

  it('refuses a bad uid and a bad body with 400, and a missing player with 404, storing nothing', async () => {
    const player = await createPlayer(app);
    expect((await app.admin.post('/admin/players/abc/export')).status).toBe(400);
    expect((await app.admin.post(`/admin/players/${player.uid}/erase`, {})).status).toBe(400);
    expect(
      (await app.admin.post(`/admin/players/${player.uid}/erase`, { confirm: player.username, x: 1 })).status,
    ).toBe(400);
    expect((await app.admin.post(`/admin/players/${player.uid}/erase`, { confirm: 'x'.repeat(33) })).status).toBe(400);
    const missing = await app.admin.post('/admin/players/999999999/erase', { confirm: 'nobody' });
    expect(missing.body).toEqual({ error: 'NOT_FOUND', message: 'No player with uid 999999999' });
    expect(await app.sql('SELECT uid::int FROM player WHERE uid = $1', [player.uid])).toEqual([{ uid: player.uid }]);
    expect(await app.sql('SELECT uid::int FROM player_erasure WHERE uid = $1', [player.uid])).toEqual([]);
  });

  // Another connection holds a lock both wait for: PostgreSQL only (the embedded database has one connection).
  const onPostgres = testDatabaseServerUrl() ? it : it.skip;
  onPostgres('an upload queued behind an erasure is refused like one after it, never a 5xx', async () => {
    await defineCharts(app, [951]);
    const player = await onlinePlayer(app, server);
    expect((await upload(app, server, player, 951, 99)).status).toBe(200);
    const waiting = async (count: number) => {
      const deadline = Date.now() + 10_000;
      const query =
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'";
      while ((await app.sql<{ n: number }>(query))[0].n < count) {
        if (Date.now() > deadline) throw new Error(`fewer than ${count} statements wait for the lock`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const holder = new Client({ connectionString: app.env.DATABASE_URL });
    await holder.connect();
    try {
      // The player's rating row, which the erasure and then the upload lock: they queue in that order.
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM player_rating WHERE uid = $1 FOR UPDATE', [player.uid]);
      const erasing = app.admin.post(`/admin/players/${player.uid}/erase`, { confirm: player.username });
      await waiting(1);
      const uploading = upload(app, server, player, 951, 100);
      await waiting(2);
      await holder.query('ROLLBACK');
      expect((await erasing).status).toBe(200);
      const late = await uploading;
      expect({ status: late.status, body: late.body }).toEqual({
        status: 401,
        body: { error: 'UNAUTHORIZED', message: `Player ${player.uid} was erased: nothing is stored for this uid` },
      });
      expect(await app.sql('SELECT 1 FROM play_record WHERE uid = $1', [player.uid])).toEqual([]);
    } finally {
      await holder.end();
    }
  });

  onPostgres(
    'erases only when no history snapshot or period archive runs beside it, trying again meanwhile',
    async () => {
      const holder = new Client({ connectionString: app.env.DATABASE_URL });
      await holder.connect();
      // An open season, whose row an archive or a close would hold (the period job leaves it alone).
      const [period] = await app.sql<{ id: string }>(
        `INSERT INTO board_period (kind, slug, name, starts_at, ends_at)
       VALUES ('season', 'erasure-hold', 'Erasure hold', now() - interval '1 day', now() + interval '1 day')
       RETURNING id::text AS id`,
      );
      const locksWaited = async () =>
        (
          await app.sql<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
          )
        )[0].n;
      try {
        for (const [what, hold] of [
          ['a history snapshot', `SELECT pg_advisory_xact_lock(${SNAPSHOT_LOCK_KEY})`],
          ['an archive or a close', `SELECT 1 FROM board_period WHERE id = ${period.id} FOR UPDATE`],
        ] as const) {
          const player = await onlinePlayer(app, server);
          const erased = async () =>
            (await app.sql('SELECT 1 FROM player_erasure WHERE uid = $1', [player.uid])).length;
          await holder.query('BEGIN');
          await holder.query(hold);
          const erasing = app.admin.post(`/admin/players/${player.uid}/erase`, { confirm: player.username });
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          // Tried and rolled back, never waiting on a lock (a wait would hold what it had locked).
          expect({ what, erased: await erased(), waiting: await locksWaited() }).toEqual({
            what,
            erased: 0,
            waiting: 0,
          });
          await holder.query('ROLLBACK');
          expect({ what, status: (await erasing).status, erased: await erased() }).toEqual({
            what,
            status: 200,
            erased: 1,
          });
        }
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        await holder.end();
        await app.sql('DELETE FROM board_period WHERE id = $1', [period.id]);
      }
    },
  );

  onPostgres('answers 503 with Retry-After 60, storing nothing, when a copy runs past its 30 s of tries', async () => {
    const holder = new Client({ connectionString: app.env.DATABASE_URL });
    await holder.connect();
    const player = await onlinePlayer(app, server);
    const realNow = Date.now.bind(Date);
    let skipped = 0;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + skipped);
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(${SNAPSHOT_LOCK_KEY})`);
      const erasing = app.admin.post(`/admin/players/${player.uid}/erase`, { confirm: player.username });
      await new Promise((resolve) => setTimeout(resolve, 600));
      skipped = 31_000; // the snapshot has now run for longer than the erasure tries
      const answer = await erasing;
      expect({ status: answer.status, body: answer.body, retryAfter: answer.headers.get('retry-after') }).toEqual({
        status: 503,
        body: {
          error: 'UNAVAILABLE',
          message: 'A period archive or the rating history snapshot is running; erase again in a minute',
        },
        retryAfter: '60',
      });
    } finally {
      clock.mockRestore();
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
    expect(await app.sql('SELECT 1 FROM player_erasure WHERE uid = $1', [player.uid])).toEqual([]);
    expect(await app.sql('SELECT username FROM player WHERE uid = $1', [player.uid])).toEqual([
      { username: player.username },
    ]);
    // Once the copy is done, the same request erases.
    expect((await app.admin.post(`/admin/players/${player.uid}/erase`, { confirm: player.username })).status).toBe(200);
  });

  const twoInstances = multiInstanceAvailable() ? it : it.skip;
  twoInstances('on two instances sharing Redis, the second one ranks without the erased player too', async () => {
    const second = await startTestApp({ shareWith: app });
    try {
      const serverB = await onlineServer(second);
      await defineCharts(app, [801]);
      const x = await onlinePlayer(app, server);
      const y = await onlinePlayer(second, serverB);
      expect((await upload(app, server, x, 801, 100)).status).toBe(200);
      expect((await upload(second, serverB, y, 801, 99)).body).toMatchObject({ trackRank: 2 });
      expect((await app.admin.post(`/admin/players/${x.uid}/erase`, { confirm: x.username })).status).toBe(200);
      expect((await upload(second, serverB, y, 801, 98)).body).toMatchObject({ trackRank: 1 });
      // And the first instance, which erased, agrees.
      const z = await onlinePlayer(app, server);
      expect((await upload(app, server, z, 801, 97)).body).toMatchObject({ trackRank: 2 });
    } finally {
      await second.close();
    }
  });

  // Last: it restarts the service.
  it('erases a banned player without counting them twice: the ranks of others stay exact', async () => {
    await defineCharts(app, [901]);
    const banned = await onlinePlayer(app, server);
    const other = await onlinePlayer(app, server);
    expect((await upload(app, server, banned, 901, 100)).status).toBe(200);
    expect((await upload(app, server, other, 901, 99)).body).toMatchObject({ trackRank: 2 });
    expect((await app.admin.post(`/admin/players/${banned.uid}/ban`, { reason: 'cheat' })).status).toBe(200);
    expect((await upload(app, server, other, 901, 98)).body).toMatchObject({ trackRank: 1 });
    // The ban's kick_player frame is kept for the server session (written as the event is heard).
    const kept = () =>
      app.sql("SELECT 1 FROM realtime_outbox WHERE frame -> 'data' ->> 'uid' = $1", [String(banned.uid)]);
    const deadline = Date.now() + 5_000;
    while ((await kept()).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await kept()).toHaveLength(1);
    const erased = await app.admin.post(`/admin/players/${banned.uid}/erase`, { confirm: banned.username });
    expect(erased.body.rows).toMatchObject({ bans: 1, bests: 1, plays: 1, rating: 1, sessions: 1, pendingKicks: 1 });
    expect(await kept()).toEqual([]);
    expect((await upload(app, server, other, 901, 97)).body).toMatchObject({ trackRank: 1 });
    const third = await onlinePlayer(app, server);
    expect((await upload(app, server, third, 901, 99.5)).body).toMatchObject({ trackRank: 1 });
    expect((await upload(app, server, other, 901, 96)).body).toMatchObject({ trackRank: 2 });

    // After a restart the rank index (in process: its snapshot plus what changed since) still
    // holds no entry of the erased player.
    await app.restart();
    expect((await upload(app, server, other, 901, 95)).body).toMatchObject({ trackRank: 2 });
    expect((await upload(app, server, third, 901, 94)).body).toMatchObject({ trackRank: 1 });
  });
});
