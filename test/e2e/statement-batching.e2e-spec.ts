import { SessionRenewal, SessionRepository } from '../../src/auth/session.repository';
import { TokenService } from '../../src/auth/token.service';
import { CatalogRepository } from '../../src/catalog/catalog.repository';
import { mapError } from '../../src/common/errors/error-body';
import { PreparedQueries } from '../../src/database/prepared-queries';
import { BatchableStatement, MAX_BATCH_CALLS, StatementBatcher } from '../../src/database/statement-batcher';
import { EconomyRepository } from '../../src/economy/economy.repository';
import { OneRoundTripLogin, OneRoundTripLoginResult, PlayerRepository } from '../../src/player/player.repository';
import type { UploadRecordDto } from '../../src/upload/dto/upload-record.dto';
import { UploadService } from '../../src/upload/upload.service';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { indexAgainstSql } from '../support/rank-index-check';
import { createPlayer, onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer } from '../factories/server.factory';
import { Client } from 'pg';
import { startTestApp, TestApp } from '../support/test-app';
import { testDatabaseServerUrl } from '../setup/test-env';

/**
 * Issue #16: the login, the collection and balance syncs and the upload go to the database together
 * when they arrive together (StatementBatcher, docs/decisions.md "Logins, syncs and uploads batched
 * under load"). Calls made in one turn of the event loop are one batch, so these tests call the
 * repositories and the upload service directly; the routes' answers are held by the economy,
 * catalog, player, upload and login-burst specs, which run the same statements alone or batched
 * as requests arrive.
 */
describe('Statement batching', () => {
  let app: TestApp;
  let server: Awaited<ReturnType<typeof onlineServer>>;
  let serverSessionId: string;
  let players: TestPlayerSession[];

  beforeAll(async () => {
    // The in-process rank index, which indexAgainstSql compares with SQL entry by entry.
    app = await startTestApp({ redis: false });
    server = await onlineServer(app);
    players = [];
    for (let n = 0; n < 12; n++) players.push(await onlinePlayer(app, server));
    const [session] = await app.sql<{ id: string }>('SELECT id FROM server_session WHERE token_hash = $1', [
      hash(server.accessToken),
    ]);
    serverSessionId = session.id;
  });
  afterAll(async () => {
    await app.close();
  });

  const hash = (token: string) => app.get(TokenService).hash(token);
  const batched = () => app.get(StatementBatcher).stats().batchedCalls;
  /** The uid a one-round-trip login answered with (the player it logged in, or the one whose session is live). */
  const loginUid = (result: OneRoundTripLoginResult): number | null =>
    result.status === 'ok' ? Number(result.player.uid) : result.status === 'live' ? Number(result.uid) : null;
  /** What PlayerLoginService.login hands rhythmc_player_login for a Net Token login of `uid` (tokens named by `tag`). */
  const tokenLogin = (uid: number, tag: string, now = new Date()): OneRoundTripLogin => ({
    mode: 'TOKEN',
    uid: String(uid),
    uuid: null,
    username: null,
    resumeHash: null,
    serverSessionId,
    tokenHash: hash(`${tag}-token-${uid}`),
    tokenExpiresAt: new Date(now.getTime() + 600_000),
    version: 4,
    newResumeHash: hash(`${tag}-resume-${uid}`),
    resumeExpiresAt: new Date(now.getTime() + 3_600_000),
    now,
    // No session-handover setting stored: no group.
    home: { inGroup: false, servers: [], setting: 'null' },
  });

  it('answers every balance sync of one batch with its own result, in any order of arrival', async () => {
    const before = batched();
    const economy = app.get(EconomyRepository);
    // Reversed uids: the batch runs them in uid order and still answers each call its own row.
    const calls = [...players].reverse().map((player, n) => ({
      tokenHash: hash(player.accessToken),
      uid: String(player.uid),
      serverSessionId,
      now: new Date(),
      wattHour: 1000 + n,
      expected: null,
      serverId: server.serverID,
    }));
    const wrongToken = { ...calls[0], tokenHash: hash('not a token') };
    const conflict = { ...calls[1], uid: String(players[players.length - 2].uid), expected: 5, wattHour: 7 };
    const answers = await Promise.all([...calls, wrongToken].map((call) => economy.setBalance(call)));
    expect(answers).toEqual([
      ...calls.map((call) => ({ status: 'ok', stored: String(call.wattHour) })),
      { status: 'invalid_token', stored: null },
    ]);
    expect(batched() - before).toBe(calls.length + 1);

    const stored = await app.sql<{ uid: string; watt_hour: string }>(
      'SELECT uid::text, watt_hour::text FROM player_balance b WHERE b.uid = ANY($1::bigint[]) ORDER BY b.uid',
      [players.map((p) => p.uid)],
    );
    expect(stored).toEqual(
      calls
        .map((call) => ({ uid: call.uid, watt_hour: String(call.wattHour) }))
        .sort((a, b) => Number(a.uid) - Number(b.uid)),
    );

    // A compare-and-set in a batch: refused with the stored balance, nothing written.
    const second = await Promise.all([economy.setBalance(conflict), economy.setBalance({ ...calls[2], wattHour: 3 })]);
    expect(second).toEqual([
      { status: 'conflict', stored: '1001' },
      { status: 'ok', stored: '3' },
    ]);
  });

  it('answers every collection sync of one batch, refusing one call without failing the others', async () => {
    const catalog = app.get(CatalogRepository);
    const defined = await app.admin.put('/admin/collections', [
      {
        key: 'rhythmc:tag.batch',
        type: 'tag',
        unlockMethod: { type: 'MANUAL' },
        properties: { title: '&aBatch', description: 'A tag', rarity: 'COMMON', position: false },
      },
    ]);
    expect(defined.status).toBe(200);
    const grant = (player: TestPlayerSession, keys: string[]) => ({
      tokenHash: hash(player.accessToken),
      uid: String(player.uid),
      serverSessionId,
      now: new Date(),
      keys,
      assetKeys: keys.filter((key) => key.startsWith('rhythmc:assets.')),
    });
    const before = batched();
    const answers = await Promise.all([
      catalog.grantCollectionsWithToken(grant(players[0], ['rhythmc:tag.batch', 'rhythmc:assets.b.1'])),
      catalog.grantCollectionsWithToken(grant(players[1], ['rhythmc:tag.nope', 'rhythmc:tag.batch'])),
      catalog.grantCollectionsWithToken(grant(players[2], [])),
      catalog.grantCollectionsWithToken(grant(players[3], ['rhythmc:assets.b.1'])),
    ]);
    // `refused` is [] after the catalog check, null when there was none to make (no key, or every key owned);
    // `held` is set only with `too_many`.
    expect(answers).toEqual([
      { status: 'ok', refused: [], held: null },
      { status: 'refused', refused: ['rhythmc:tag.nope'], held: null },
      { status: 'ok', refused: null, held: null },
      { status: 'ok', refused: [], held: null },
    ]);
    expect(batched() - before).toBe(4);
    const granted = await app.sql<{ uid: number; collection_key: string }>(
      'SELECT uid::int AS uid, collection_key FROM player_collection WHERE uid = ANY($1::bigint[]) ORDER BY uid, collection_key COLLATE "C"',
      [players.slice(0, 4).map((p) => p.uid)],
    );
    expect(granted).toEqual([
      { uid: players[0].uid, collection_key: 'rhythmc:assets.b.1' },
      { uid: players[0].uid, collection_key: 'rhythmc:tag.batch' },
      { uid: players[3].uid, collection_key: 'rhythmc:assets.b.1' },
    ]);
  });

  it('answers every resume_session renewal of one batch with its own result, renewing only the live ones', async () => {
    const sessions = app.get(SessionRepository);
    const fresh: TestPlayerSession[] = [];
    for (let n = 0; n < 8; n++) fresh.push(await onlinePlayer(app, server));
    const [moved, twice, otherUid, expired, loggedOut, endedServer, unknownToken, held] = fresh;
    const sessionOf = async (token: string) =>
      (await app.sql<{ id: string }>('SELECT id FROM server_session WHERE token_hash = $1', [hash(token)]))[0].id;
    // Another live server session of the network, and one that has ended.
    const liveElsewhere = await sessionOf((await onlineServer(app)).accessToken);
    const ended = await sessionOf((await onlineServer(app)).accessToken);
    await app.sql('UPDATE server_session SET ended_at = now() WHERE id = $1', [ended]);
    await app.sql(`UPDATE player_session SET token_expires_at = now() - interval '1 second' WHERE uid = $1`, [
      expired.uid,
    ]);
    await app.sql(`UPDATE player_session SET logged_out_at = now(), logout_reason = 'logout' WHERE uid = $1`, [
      loggedOut.uid,
    ]);
    const stateOf = () =>
      app.sql<{ uid: number; server_session_id: string; token_expires_at: Date; renewed_at: Date }>(
        `SELECT uid::int AS uid, server_session_id, token_expires_at, renewed_at FROM player_session
          WHERE uid = ANY($1::bigint[]) ORDER BY uid`,
        [fresh.map((p) => p.uid)],
      );
    const before = await stateOf();
    const now = new Date(Date.now() + 1_000);
    const expiresAt = new Date(now.getTime() + 900_000);
    const renewal = (player: TestPlayerSession, overrides: Partial<SessionRenewal> = {}): SessionRenewal => ({
      tokenHash: hash(player.accessToken),
      uid: String(player.uid),
      serverSessionId,
      now,
      expiresAt,
      moveFrom: null,
      ...overrides,
    });
    const run = jest.spyOn(app.get(PreparedQueries), 'run');
    const counted = batched();
    let answers: unknown[];
    let sent: unknown[][] = [];
    try {
      // Reversed uids: the batch runs the renewals in uid order and answers each its own row.
      answers = await Promise.all([
        // Bound to another server, which the call does not name: nothing written, the holder answered.
        sessions.renewPlayerSessionByToken(renewal(held, { serverSessionId: liveElsewhere })),
        sessions.renewPlayerSessionByToken(renewal(unknownToken, { tokenHash: hash('no such token') })),
        sessions.renewPlayerSessionByToken(renewal(endedServer, { serverSessionId: ended, moveFrom: server.serverID })),
        sessions.renewPlayerSessionByToken(renewal(loggedOut)),
        sessions.renewPlayerSessionByToken(renewal(expired)),
        sessions.renewPlayerSessionByToken(renewal(otherUid, { uid: String(moved.uid) })),
        sessions.renewPlayerSessionByToken(renewal(twice)),
        // Made earlier than the one before it (its expiry is earlier) but run after it: that one stands.
        sessions.renewPlayerSessionByToken(
          renewal(twice, {
            serverSessionId: liveElsewhere,
            moveFrom: server.serverID,
            now: new Date(now.getTime() - 5_000),
            expiresAt: new Date(expiresAt.getTime() - 5_000),
          }),
        ),
        sessions.renewPlayerSessionByToken(
          renewal(moved, { serverSessionId: liveElsewhere, moveFrom: server.serverID }),
        ),
      ]);
      sent = [...run.mock.calls];
    } finally {
      run.mockRestore();
    }
    expect(batched() - counted).toBe(9);
    expect(answers).toEqual([
      { uid: String(held.uid), live: true, renewed: false, boundServerId: server.serverID },
      null,
      { uid: String(endedServer.uid), live: true, renewed: false, boundServerId: null },
      { uid: String(loggedOut.uid), live: false, renewed: false, boundServerId: null },
      { uid: String(expired.uid), live: false, renewed: false, boundServerId: null },
      { uid: String(otherUid.uid), live: true, renewed: false, boundServerId: null },
      { uid: String(twice.uid), live: true, renewed: true, boundServerId: null },
      { uid: String(twice.uid), live: true, renewed: true, boundServerId: null },
      { uid: String(moved.uid), live: true, renewed: true, boundServerId: null },
    ]);
    // One statement, its calls in uid order (the order its rows are locked in).
    const batches = sent.filter(([name]) => name === 'session_renew_by_token_batch');
    expect(batches).toHaveLength(1);
    const uids = (batches[0][2] as unknown[][])[1].map(Number);
    expect(uids).toEqual([...uids].sort((a, b) => a - b));
    // Only the renewed sessions changed: `moved` to the other server session, `twice` by its later renewal.
    expect(await stateOf()).toEqual(
      before.map((row) =>
        row.uid === moved.uid
          ? { ...row, server_session_id: liveElsewhere, token_expires_at: expiresAt, renewed_at: now }
          : row.uid === twice.uid
            ? { ...row, token_expires_at: expiresAt, renewed_at: now }
            : row,
      ),
    );
  });

  it('logs in a batch of players, the second login of one of them seeing the first one live', async () => {
    const repo = app.get(PlayerRepository);
    const fresh = await Promise.all([createPlayer(app), createPlayer(app), createPlayer(app), createPlayer(app)]);
    const before = batched();
    const rows = await Promise.all([
      repo.loginInOneRoundTrip(tokenLogin(fresh[0].uid, 'batch1')),
      // A group in the batch's arrays (a JSON text each); a setting that is not the one in force.
      repo.loginInOneRoundTrip({
        ...tokenLogin(fresh[1].uid, 'batch1'),
        home: { inGroup: true, servers: [server.serverID, 424_242], setting: 'null' },
      }),
      repo.loginInOneRoundTrip(tokenLogin(fresh[0].uid, 'batch2')),
      repo.loginInOneRoundTrip(tokenLogin(999_999_999, 'batch1')),
      repo.loginInOneRoundTrip(tokenLogin(fresh[2].uid, 'batch1')),
      repo.loginInOneRoundTrip({
        ...tokenLogin(fresh[3].uid, 'batch1'),
        home: { inGroup: false, servers: [], setting: '{"mode": "all", "groups": [], "modes": []}' },
      }),
    ]);
    expect(batched() - before).toBe(6);
    expect(rows.map((row) => [row.status, loginUid(row)])).toEqual([
      ['ok', fresh[0].uid],
      ['ok', fresh[1].uid],
      ['live', fresh[0].uid],
      ['unknown_player', null],
      ['ok', fresh[2].uid],
      ['setting_changed', null],
    ]);
    // The logged-in players have a home; the refused login wrote nothing (no session below either).
    const homes = await app.sql<{ uid: number; home: number | null }>(
      'SELECT uid::int AS uid, home_server_id AS home FROM player WHERE uid = ANY($1::bigint[]) ORDER BY uid',
      [fresh.map((p) => p.uid)],
    );
    expect(homes).toEqual(
      [...fresh]
        .sort((a, b) => a.uid - b.uid)
        .map((p) => ({ uid: p.uid, home: p.uid === fresh[3].uid ? null : server.serverID })),
    );
    expect(rows[0]).toMatchObject({ player: { username: fresh[0].username }, previousVersion: 0, collections: [] });
    const sessions = await app.sql<{ uid: number; token_hash: string }>(
      'SELECT uid::int AS uid, token_hash FROM player_session WHERE uid = ANY($1::bigint[]) AND logged_out_at IS NULL ORDER BY uid',
      [fresh.map((p) => p.uid)],
    );
    expect(sessions).toEqual(
      fresh
        .slice(0, 3)
        .sort((a, b) => a.uid - b.uid)
        .map((p) => ({ uid: p.uid, token_hash: tokenLogin(p.uid, 'batch1').tokenHash })),
    );
  });

  it('answers every upload of one batch as alone: its own ranks, and 401 for a dead token beside them', async () => {
    await defineCharts(app, [801], 12);
    const uploads = app.get(UploadService);
    const context = {
      sessionId: serverSessionId,
      serverId: server.serverID,
      tokenExpiresAt: new Date(Date.now() + 600_000),
      tokenHash: hash(server.accessToken),
    };
    const time = Date.now() - 3_600_000;
    const body = (player: TestPlayerSession, acc: number, accessToken = player.accessToken) =>
      ({
        player: { playerUID: String(player.uid), accessToken, timestamp: time + 250 },
        server: { serverID: server.serverID, serverName: 'batch', country: 'DE' },
        payload: gameplayPayload(801, time, { acc }),
      }) as unknown as UploadRecordDto;
    const uploaders = players.slice(8, 12);
    const before = batched();
    const settled = await Promise.allSettled([
      ...uploaders.map((player, n) => uploads.upload(context, body(player, 99 - n))),
      uploads.upload(context, body(uploaders[0], 99, 'dead-token')),
    ]);
    // Four uploads in one batch (the dead token's waits for the first upload of its player): run
    // in uid order, each answered the rank it had when stored, as if they had come one by one.
    expect(batched() - before).toBeGreaterThanOrEqual(4);
    expect(settled.slice(0, 4).map((s) => (s.status === 'fulfilled' ? s.value.trackRank : s.status))).toEqual([
      1, 2, 3, 4,
    ]);
    expect(settled.slice(0, 4).every((s) => s.status === 'fulfilled' && s.value.personalBest)).toBe(true);
    expect(settled[4]).toMatchObject({
      status: 'rejected',
      reason: { message: 'Invalid or expired player access token' },
    });
    const stored = await app.sql<{ uid: number; acc: number }>(
      'SELECT uid::int AS uid, acc FROM play_record WHERE level_id = 801 ORDER BY acc',
    );
    expect(stored).toEqual(uploaders.map((player, n) => ({ uid: player.uid, acc: 99 - n })).reverse());
    const { index, sql } = await indexAgainstSql(app);
    expect(index).toEqual(sql);
  });

  // The embedded database is one session: no second connection can hold a lock against the service.
  (testDatabaseServerUrl() ? it : it.skip)(
    'answers every login of a batch that deadlocked, each run again alone',
    async () => {
      const repo = app.get(PlayerRepository);
      const [a, b] = await Promise.all([createPlayer(app), createPlayer(app)]);
      // Another transaction holds b; the batch locks a, then waits for b; the other transaction
      // then asks for a: a cycle, which PostgreSQL breaks by cancelling the batch (it waited first).
      const other = new Client({ connectionString: app.env.DATABASE_URL });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query('SELECT 1 FROM player WHERE uid = $1 FOR UPDATE', [b.uid]);
        const fallbacks = app.get(StatementBatcher).stats().fallbacks;
        const logins = Promise.all([
          repo.loginInOneRoundTrip(tokenLogin(a.uid, 'deadlock')),
          repo.loginInOneRoundTrip(tokenLogin(b.uid, 'deadlock')),
        ]);
        await new Promise((resolve) => setTimeout(resolve, 200));
        const otherLock = other.query('SELECT 1 FROM player WHERE uid = $1 FOR UPDATE', [a.uid]);
        await otherLock;
        await other.query('COMMIT');
        const rows = await logins;
        expect(rows.map((row) => [row.status, loginUid(row)])).toEqual([
          ['ok', a.uid],
          ['ok', b.uid],
        ]);
        expect(app.get(StatementBatcher).stats().fallbacks).toBe(fallbacks + 1);
        const sessions = await app.sql<{ uid: number }>(
          'SELECT uid::int AS uid FROM player_session WHERE uid = ANY($1::bigint[]) AND logged_out_at IS NULL ORDER BY uid',
          [[a.uid, b.uid]],
        );
        expect(sessions).toEqual([{ uid: Math.min(a.uid, b.uid) }, { uid: Math.max(a.uid, b.uid) }]);
      } finally {
        await other.end();
      }
    },
    10_000,
  );

  (testDatabaseServerUrl() ? it : it.skip)(
    'fails only the login whose player row stays held past the 5 s lock_timeout (503), the rest of its batch answered',
    async () => {
      const repo = app.get(PlayerRepository);
      const [held, free] = await Promise.all([createPlayer(app), createPlayer(app)]);
      const other = new Client({ connectionString: app.env.DATABASE_URL });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query('SELECT 1 FROM player WHERE uid = $1 FOR UPDATE', [held.uid]);
        const fallbacks = app.get(StatementBatcher).stats().fallbacks;
        const started = Date.now();
        const [heldLogin, freeLogin] = await Promise.allSettled([
          repo.loginInOneRoundTrip(tokenLogin(held.uid, 'held')),
          repo.loginInOneRoundTrip(tokenLogin(free.uid, 'held')),
        ]);
        // The batch gave up after 5 s, then each ran alone: the held one waited 5 s more.
        expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
        expect(freeLogin).toMatchObject({
          status: 'fulfilled',
          value: { status: 'ok', player: { uid: String(free.uid) } },
        });
        expect(heldLogin.status).toBe('rejected');
        const reason = (heldLogin as PromiseRejectedResult).reason as { driverError?: { code?: string } };
        expect(reason.driverError?.code).toBe('55P03');
        expect(mapError(reason)).toMatchObject({ status: 503, body: { error: 'UNAVAILABLE' } });
        expect(app.get(StatementBatcher).stats().fallbacks).toBe(fallbacks + 1);
        await other.query('COMMIT');
        expect(
          await app.sql<{ uid: number }>(
            'SELECT uid::int AS uid FROM player_session WHERE uid = ANY($1::bigint[]) AND logged_out_at IS NULL',
            [[held.uid, free.uid]],
          ),
        ).toEqual([{ uid: free.uid }]);
      } finally {
        await other.end();
      }
    },
    20_000,
  );

  describe('a batch whose statement fails', () => {
    // A probe statement: each call writes a balance history row for uid with 100 / d as its value.
    const probe: BatchableStatement<{ uid: number; d: number }, { uid: string; v: number }> = {
      name: 'test_batch_probe',
      single: `INSERT INTO balance_history (uid, previous_watt_hour, watt_hour) VALUES ($1, NULL, 100 / $2::int)
               RETURNING uid::text, watt_hour::int AS v`,
      params: (c) => [c.uid, c.d],
      batch: `WITH a AS (SELECT * FROM unnest($1::bigint[], $2::int[]) WITH ORDINALITY AS a(uid, d, i)),
                   w AS (INSERT INTO balance_history (uid, previous_watt_hour, watt_hour)
                         SELECT uid, NULL, 100 / d FROM a ORDER BY i RETURNING uid, watt_hour)
              SELECT a.i, a.uid::text, (100 / a.d)::int AS v FROM a WHERE (SELECT count(*) FROM w) > 0 ORDER BY a.i`,
    };
    const historyOf = (uid: number) =>
      app.sql<{ watt_hour: string }>(
        'SELECT watt_hour::text FROM balance_history WHERE uid = $1 AND server_id IS NULL ORDER BY id',
        [uid],
      );

    it('writes nothing of the batch and answers every call as if it had run alone', async () => {
      const batcher = app.get(StatementBatcher);
      const [a, b, c] = players.slice(4, 7);
      const fallbacks = batcher.stats().fallbacks;
      const settled = await Promise.allSettled([
        batcher.run(probe, { uid: a.uid, d: 4 }),
        batcher.run(probe, { uid: b.uid, d: 0 }),
        batcher.run(probe, { uid: c.uid, d: 5 }),
      ]);
      expect(settled[0]).toEqual({ status: 'fulfilled', value: { uid: String(a.uid), v: 25 } });
      expect(settled[1]).toMatchObject({ status: 'rejected', reason: { message: 'division by zero' } });
      expect(settled[2]).toEqual({ status: 'fulfilled', value: { uid: String(c.uid), v: 20 } });
      expect(batcher.stats().fallbacks).toBe(fallbacks + 1);
      // Once each: the batch's own rows were rolled back with its statement.
      expect(await historyOf(a.uid)).toEqual([{ watt_hour: '25' }]);
      expect(await historyOf(b.uid)).toEqual([]);
      expect(await historyOf(c.uid)).toEqual([{ watt_hour: '20' }]);
    });

    it(`splits more than ${MAX_BATCH_CALLS} calls into batches of at most ${MAX_BATCH_CALLS}`, async () => {
      const batcher = app.get(StatementBatcher);
      const uid = players[7].uid;
      const before = batcher.stats();
      const answers = await Promise.all(
        Array.from({ length: MAX_BATCH_CALLS + 3 }, (_, n) => batcher.run(probe, { uid, d: n + 1 })),
      );
      expect(answers.map((answer) => answer.v)).toEqual(
        Array.from({ length: MAX_BATCH_CALLS + 3 }, (_, n) => Math.trunc(100 / (n + 1))),
      );
      expect(batcher.stats()).toEqual({
        batchedCalls: before.batchedCalls + MAX_BATCH_CALLS + 3,
        fallbacks: before.fallbacks,
      });
      expect(await historyOf(uid)).toHaveLength(MAX_BATCH_CALLS + 3);
    });

    it('shows the batched calls and the fallbacks in the metrics', async () => {
      const stats = app.get(StatementBatcher).stats();
      // The failed probe batch, and on PostgreSQL the deadlocked and the held logins.
      expect(stats.fallbacks).toBe(testDatabaseServerUrl() ? 3 : 1);
      const metrics = (await app.http.get('/metrics', { token: null })).text;
      expect(metrics).toContain(`rhythmc_db_batched_calls_total ${stats.batchedCalls}\n`);
      expect(metrics).toContain(`rhythmc_db_batch_fallbacks_total ${stats.fallbacks}\n`);
    });
  });
});
