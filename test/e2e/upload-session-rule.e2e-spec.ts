import { createHash, randomBytes } from 'node:crypto';
import type { UploadSessionClock } from '../../src/auth/auth.types';
import {
  playerSessionByTokenHashCte,
  uploadSessionError,
  uploadSessionRefusal,
  UploadSessionRefusal,
  UploadSessionRule,
} from '../../src/auth/upload-session.rule';
import { createPlayer } from '../factories/player.factory';
import { onlineServer } from '../factories/server.factory';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The upload-session rule (src/auth/upload-session.rule.ts) is decided in SQL only:
 * rhythmc_upload_session_refusal answers the reason a session is refused, and TypeScript words it
 * (uploadSessionError). No TypeScript form decides anything any more, so there is no SQL/TypeScript
 * pair to compare; what is held here: the function's reason for every kind of stored session, as
 * the upload statements call it, around every boundary of its clock, and its 401 wording.
 */
describe('Upload session rule: the reason in SQL and its wording', () => {
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

  /** The SQL form as the transactional upload statement calls it: over the CTE's row by token hash, or nulls. */
  async function refusalInSql(
    tokenHash: string,
    uid: string,
    serverSessionId: string,
    clock: UploadSessionClock,
  ): Promise<UploadSessionRefusal | null> {
    const [result] = await app.sql<{ refusal: UploadSessionRefusal | null }>(
      `WITH ${playerSessionByTokenHashCte('sess', '$1')}
       SELECT ${uploadSessionRefusal('s', params)} AS refusal FROM (VALUES (1)) one LEFT JOIN sess s ON true`,
      [tokenHash, uid, serverSessionId, clock.now, clock.liveSince],
    );
    return result.refusal;
  }

  /** The answer an upload gives for that refusal: accepted, or the message of its 401. */
  const answer = (refusal: UploadSessionRefusal | null): true | string =>
    refusal === null ? true : uploadSessionError(refusal).message;

  it('answers the expected reason for every kind of stored session, worded as the 401 says', async () => {
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
    const judged: Array<{ name: string; answer: true | string }> = [];
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
      judged.push({
        name: testCase.name,
        answer: answer(await refusalInSql(tokenHash, uploadUid, callingSession, clock)),
      });
    }
    // The 401 messages UploadSessionRule.check gave for these sessions before the reason moved to SQL.
    expect(judged).toEqual(cases.map((testCase) => ({ name: testCase.name, answer: testCase.expected })));
  });

  it('words every reason, and nothing else', () => {
    const reasons: UploadSessionRefusal[] = [
      'no_session',
      'other_uid',
      'other_server',
      'expired_other_server',
      'not_renewed',
    ];
    expect(new Set(reasons.map((reason) => uploadSessionError(reason).message)).size).toBe(reasons.length);
    expect(() => uploadSessionError('stale' as UploadSessionRefusal)).toThrow('Unknown upload session refusal: stale');
  });

  it('takes its clock once: liveSince is two resync intervals before now', () => {
    const before = Date.now();
    const clock = rule.clock();
    expect(clock.now.getTime()).toBeGreaterThanOrEqual(before);
    expect(clock.now.getTime()).toBeLessThanOrEqual(Date.now());
    expect(clock.now.getTime() - clock.liveSince.getTime()).toBe(2 * app.config.playerResyncIntervalSeconds * 1000);
  });
});
