import { createHash, randomBytes } from 'node:crypto';
import type { ServerSessionContext, UploadSessionClock, UploadSessionRow } from '../../src/auth/auth.types';
import {
  playerSessionByTokenHashCte,
  uploadSessionAccepted,
  UploadSessionRule,
} from '../../src/auth/upload-session.rule';
import { UnauthorizedError } from '../../src/common/errors/app-error';
import { createPlayer } from '../factories/player.factory';
import { onlineServer } from '../factories/server.factory';
import { functionFiles } from '../support/function-files';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The upload-session rule has two forms (src/auth/upload-session.rule.ts): the SQL the upload
 * statement embeds and the TypeScript check that answers the 401. Both are run here over the same
 * session rows, and must agree row by row.
 */
describe('Upload session rule: SQL and TypeScript agree', () => {
  let app: TestApp;
  let rule: UploadSessionRule;

  beforeAll(async () => {
    app = await startTestApp();
    rule = app.get(UploadSessionRule);
  });
  afterAll(async () => {
    await app.close();
  });

  const params = { uid: '$2::bigint', serverSession: '$3::uuid', now: '$4::timestamptz', liveSince: '$5::timestamptz' };

  /** The SQL form as the upload statement uses it: the CTE by token hash, the condition over its row. Also answers the row the CTE read. */
  async function judgeInSql(
    tokenHash: string,
    uid: string,
    serverSessionId: string,
    clock: UploadSessionClock,
  ): Promise<{ accepted: boolean; row: UploadSessionRow | null }> {
    const [result] = await app.sql<{
      accepted: number;
      id: string | null;
      uid: string | null;
      server_session_id: string | null;
      token_expires_at: Date | null;
      renewed_at: Date | null;
      logged_out_at: Date | null;
    }>(
      `WITH ${playerSessionByTokenHashCte('sess', '$1')}
       SELECT (SELECT count(*) FROM sess WHERE ${uploadSessionAccepted('sess', params)})::int AS accepted,
              s.id::text AS id, s.uid::text AS uid, s.server_session_id::text AS server_session_id, s.token_expires_at, s.renewed_at, s.logged_out_at
         FROM (VALUES (1)) one LEFT JOIN sess s ON true`,
      [tokenHash, uid, serverSessionId, clock.now, clock.liveSince],
    );
    const row: UploadSessionRow | null =
      result.id === null
        ? null
        : {
            id: result.id,
            uid: result.uid as string,
            serverSessionId: result.server_session_id as string,
            tokenExpiresAt: result.token_expires_at as Date,
            renewedAt: result.renewed_at as Date,
            loggedOutAt: result.logged_out_at,
          };
    return { accepted: result.accepted === 1, row };
  }

  /** The TypeScript form: true when it accepts, else the message of its 401. */
  function judgeInTypeScript(
    row: UploadSessionRow | null,
    uid: string,
    server: ServerSessionContext,
    clock: UploadSessionClock,
  ): true | string {
    try {
      rule.check(row, uid, server, clock);
      return true;
    } catch (error) {
      if (error instanceof UnauthorizedError) return error.message;
      throw error;
    }
  }

  it('judges every kind of stored session alike, with the expected verdict', async () => {
    const calling = await onlineServer(app);
    const other = await onlineServer(app);
    const ended = await onlineServer(app);
    const sessionOf = async (serverId: number) =>
      (
        await app.sql<{ id: string }>(
          'SELECT id::text AS id FROM server_session WHERE server_id = $1 ORDER BY created_at DESC LIMIT 1',
          [serverId],
        )
      )[0].id;
    const [callingSession, otherSession, endedSession] = [
      await sessionOf(calling.serverID),
      await sessionOf(other.serverID),
      await sessionOf(ended.serverID),
    ];
    expect((await app.http.post('/server/logout', {}, { token: ended.accessToken })).status).toBe(204);
    expect(await app.sql('SELECT end_reason FROM server_session WHERE id = $1', [endedSession])).toEqual([
      { end_reason: 'logout' },
    ]);
    const server: ServerSessionContext = {
      sessionId: callingSession,
      serverId: calling.serverID,
      tokenExpiresAt: new Date(Date.now() + 60_000),
      tokenHash: '',
    };

    const now = new Date('2026-06-01T12:00:00.000Z');
    const clock: UploadSessionClock = { now, liveSince: new Date('2026-06-01T11:52:00.000Z') };
    const at = (offsetMs: number) => new Date(now.getTime() + offsetMs);
    const liveSinceAnd = (offsetMs: number) => new Date(clock.liveSince.getTime() + offsetMs);
    const MIN = 60_000;
    const stale = at(-60 * MIN);

    const INVALID = 'Invalid or expired player access token';
    const OTHER_UID = 'The access token does not belong to this uid';
    const OTHER_SERVER = 'The player session belongs to another server session';
    const EXPIRED_OTHER_SERVER =
      'The player access token has expired and the player has no online session under this server session';
    const NOT_RENEWED =
      'The player access token has expired and the player session was not renewed within two resync intervals';

    interface Case {
      name: string;
      /** The stored session; null: no session has the token. */
      session: {
        serverSessionId: string;
        tokenExpiresAt: Date;
        renewedAt: Date;
        loggedOut?: { at: Date; reason: string };
      } | null;
      /** The upload names another player than the session's. */
      otherUid?: boolean;
      expected: true | string;
    }
    const cases: Case[] = [
      {
        name: 'live token',
        session: { serverSessionId: callingSession, tokenExpiresAt: at(10 * MIN), renewedAt: stale },
        expected: true,
      },
      {
        name: 'live token, 1 ms left',
        session: { serverSessionId: callingSession, tokenExpiresAt: at(1), renewedAt: stale },
        expected: true,
      },
      {
        name: 'token expiring this instant, not renewed',
        session: { serverSessionId: callingSession, tokenExpiresAt: now, renewedAt: stale },
        expected: NOT_RENEWED,
      },
      {
        name: 'token expiring this instant, in grace',
        session: { serverSessionId: callingSession, tokenExpiresAt: now, renewedAt: liveSinceAnd(1) },
        expected: true,
      },
      {
        name: 'expired token, in grace',
        session: { serverSessionId: callingSession, tokenExpiresAt: at(-30 * MIN), renewedAt: liveSinceAnd(1) },
        expected: true,
      },
      {
        name: 'expired token, renewed just now',
        session: { serverSessionId: callingSession, tokenExpiresAt: at(-30 * MIN), renewedAt: at(-1) },
        expected: true,
      },
      {
        name: 'expired token, renewed exactly two resync intervals ago',
        session: { serverSessionId: callingSession, tokenExpiresAt: at(-30 * MIN), renewedAt: clock.liveSince },
        expected: NOT_RENEWED,
      },
      {
        name: 'expired token, not renewed',
        session: { serverSessionId: callingSession, tokenExpiresAt: at(-30 * MIN), renewedAt: stale },
        expected: NOT_RENEWED,
      },
      {
        name: 'live token bound to another server',
        session: { serverSessionId: otherSession, tokenExpiresAt: at(10 * MIN), renewedAt: at(-1) },
        expected: OTHER_SERVER,
      },
      {
        name: 'expired token in grace, bound to another server',
        session: { serverSessionId: otherSession, tokenExpiresAt: at(-30 * MIN), renewedAt: at(-1) },
        expected: EXPIRED_OTHER_SERVER,
      },
      {
        name: 'logged out when its server session ended',
        session: {
          serverSessionId: endedSession,
          tokenExpiresAt: at(10 * MIN),
          renewedAt: at(-1),
          loggedOut: { at: at(-MIN), reason: 'server_session_ended' },
        },
        expected: INVALID,
      },
      {
        name: 'bound to an ended server session, its logout lost',
        session: { serverSessionId: endedSession, tokenExpiresAt: at(10 * MIN), renewedAt: at(-1) },
        expected: OTHER_SERVER,
      },
      {
        name: 'logged out, live token',
        session: {
          serverSessionId: callingSession,
          tokenExpiresAt: at(10 * MIN),
          renewedAt: at(-1),
          loggedOut: { at: at(-MIN), reason: 'logout' },
        },
        expected: INVALID,
      },
      {
        name: 'banned, expired token in grace',
        session: {
          serverSessionId: callingSession,
          tokenExpiresAt: at(-30 * MIN),
          renewedAt: at(-1),
          loggedOut: { at: at(-MIN), reason: 'banned' },
        },
        expected: INVALID,
      },
      {
        name: "another player's live token",
        session: { serverSessionId: callingSession, tokenExpiresAt: at(10 * MIN), renewedAt: at(-1) },
        otherUid: true,
        expected: OTHER_UID,
      },
      {
        name: "another player's logged-out token",
        session: {
          serverSessionId: callingSession,
          tokenExpiresAt: at(10 * MIN),
          renewedAt: at(-1),
          loggedOut: { at: at(-MIN), reason: 'logout' },
        },
        otherUid: true,
        expected: INVALID,
      },
      { name: 'unknown token', session: null, expected: INVALID },
    ];

    const stranger = String((await createPlayer(app)).uid);
    const judged: Array<{ name: string; sql: boolean; typeScript: true | string }> = [];
    for (const testCase of cases) {
      const uid = String((await createPlayer(app)).uid);
      const tokenHash = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('hex');
      const { session } = testCase;
      if (session) {
        await app.sql(
          `INSERT INTO player_session (uid, server_session_id, token_hash, token_expires_at, mode, renewed_at, logged_out_at, logout_reason)
           VALUES ($1, $2, $3, $4, 'TOKEN', $5, $6, $7)`,
          [
            uid,
            session.serverSessionId,
            tokenHash,
            session.tokenExpiresAt,
            session.renewedAt,
            session.loggedOut?.at ?? null,
            session.loggedOut?.reason ?? null,
          ],
        );
      }
      const uploadUid = testCase.otherUid ? stranger : uid;
      const inSql = await judgeInSql(tokenHash, uploadUid, callingSession, clock);
      // The CTE reads back exactly the stored session.
      expect({ name: testCase.name, row: inSql.row && { ...inSql.row, id: '' } }).toEqual({
        name: testCase.name,
        row: session && {
          id: '',
          uid,
          serverSessionId: session.serverSessionId,
          tokenExpiresAt: session.tokenExpiresAt,
          renewedAt: session.renewedAt,
          loggedOutAt: session.loggedOut?.at ?? null,
        },
      });
      judged.push({
        name: testCase.name,
        sql: inSql.accepted,
        typeScript: judgeInTypeScript(inSql.row, uploadUid, server, clock),
      });
    }
    expect(judged).toEqual(
      cases.map((testCase) => ({
        name: testCase.name,
        sql: testCase.expected === true,
        typeScript: testCase.expected,
      })),
    );
  });

  it('agrees on every combination of uid, server session, token expiry, renewal and logout around the boundaries', async () => {
    const clock = { now: new Date('2026-06-01T12:00:00Z'), liveSince: new Date('2026-06-01T11:52:00Z') };
    const serverSession = '00000000-0000-4000-8000-000000000001';
    const otherSession = '00000000-0000-4000-8000-000000000002';
    const at = (iso: string) => new Date(`2026-06-01T${iso}Z`);
    const rows: UploadSessionRow[] = [];
    let n = 0;
    for (const uid of ['7', '8'])
      for (const serverSessionId of [serverSession, otherSession])
        for (const tokenExpiresAt of [at('11:59:59'), at('12:00:00'), at('12:00:01')])
          for (const renewedAt of [at('11:51:59'), at('11:52:00'), at('11:52:01')])
            for (const loggedOutAt of [null, at('11:58:00')])
              rows.push({
                id: `00000000-0000-4000-9000-${String(++n).padStart(12, '0')}`,
                uid,
                serverSessionId,
                tokenExpiresAt,
                renewedAt,
                loggedOutAt,
              });
    const judgeAll = () =>
      app.sql<{ id: string; accepted: boolean }>(
        `WITH sess AS (SELECT * FROM jsonb_to_recordset($5::jsonb) AS t(id uuid, uid bigint, server_session_id uuid, token_expires_at timestamptz, renewed_at timestamptz, logged_out_at timestamptz))
       SELECT id::text AS id, ${uploadSessionAccepted('sess', { uid: '$1::bigint', serverSession: '$2::uuid', now: '$3::timestamptz', liveSince: '$4::timestamptz' })} AS accepted FROM sess`,
        [
          '7',
          serverSession,
          clock.now,
          clock.liveSince,
          JSON.stringify(
            rows.map((r) => ({
              id: r.id,
              uid: r.uid,
              server_session_id: r.serverSessionId,
              token_expires_at: r.tokenExpiresAt,
              renewed_at: r.renewedAt,
              logged_out_at: r.loggedOutAt,
            })),
          ),
        ],
      );
    const server = { sessionId: serverSession, serverId: 1, tokenExpiresAt: clock.now, tokenHash: '' };
    const inTypeScript = rows.map((row) => judgeInTypeScript(row, '7', server, clock) === true);
    expect((await judgeAll()).map((row) => row.accepted)).toEqual(inTypeScript);
    // Both sides of each boundary occur, so the comparison means something.
    expect(inTypeScript.filter(Boolean).length).toBe(5);
    expect(inTypeScript.filter((accepted) => !accepted).length).toBe(67);

    // The SQL form changed alone (the function replaced from its file, >= for >): the comparison
    // fails on the rows whose token expires this instant and whose renewal is not in grace.
    const file = functionFiles().find((f) => f.name === 'rhythmc_upload_session_accepted')?.text ?? '';
    expect(file).toContain('s_token_expires_at > p_now');
    await app.sql(file.replace('s_token_expires_at > p_now', 's_token_expires_at >= p_now'));
    try {
      const changed = (await judgeAll()).map((row) => row.accepted);
      expect(
        rows.filter((_row, i) => changed[i] !== inTypeScript[i]).map((row) => [row.tokenExpiresAt, row.renewedAt]),
      ).toEqual([
        [at('12:00:00'), at('11:51:59')],
        [at('12:00:00'), at('11:52:00')],
      ]);
    } finally {
      await app.sql(file);
    }
    expect((await judgeAll()).map((row) => row.accepted)).toEqual(inTypeScript);
  });

  it('takes its clock once: liveSince is two resync intervals before now', () => {
    const before = Date.now();
    const clock = rule.clock();
    expect(clock.now.getTime()).toBeGreaterThanOrEqual(before);
    expect(clock.now.getTime()).toBeLessThanOrEqual(Date.now());
    expect(clock.now.getTime() - clock.liveSince.getTime()).toBe(2 * app.config.playerResyncIntervalSeconds * 1000);
  });
});
