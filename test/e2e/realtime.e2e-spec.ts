import { loginServer, onlineServer } from '../factories/server.factory';
import { createPlayer, loginPlayer, onlinePlayer } from '../factories/player.factory';
import { multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';
import { WsClient } from '../support/ws-client';
import { eventually, sleep } from '../support/wait';
import { ConnectionRegistry } from '../../src/realtime/connection-registry';
import { RealtimeService } from '../../src/realtime/realtime.service';
import { EVENT_BUS, EventBus } from '../../src/common/events/events';
import { BadRequestError } from '../../src/common/errors/app-error';
import { OUTBOX_LIMIT_PER_SESSION } from '../../src/common/events/player-frames';
import { badLines, badRequest } from '../support/bad-request';

const WsOpen = 1;

async function grantTitle(app: TestApp, uid: number, key: string, properties: Record<string, unknown>): Promise<void> {
  await app.sql(
    `INSERT INTO collection (key, type, unlock_method, properties) VALUES ($1, 'title', '{"type":"MANUAL"}', $2) ON CONFLICT (key) DO NOTHING`,
    [key, JSON.stringify(properties)],
  );
  await app.sql('INSERT INTO player_collection (uid, collection_key) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
    uid,
    key,
  ]);
}

describe('Realtime WebSocket', () => {
  let app: TestApp;
  const clients: WsClient[] = [];
  const connect = async (token: string) => {
    const client = await WsClient.connect(app.baseUrl, token);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.socket.terminate();
  });
  afterAll(async () => {
    await app.close();
  });

  describe('upgrade', () => {
    it('is refused with HTTP 401 and the error body without a valid server access token', async () => {
      const session = await onlineServer(app);
      expect(await WsClient.refused(app.baseUrl, null)).toEqual({
        status: 401,
        body: { error: 'UNAUTHORIZED', message: 'Missing bearer server access token' },
      });
      expect(await WsClient.refused(app.baseUrl, 'forged')).toEqual({
        status: 401,
        body: { error: 'UNAUTHORIZED', message: 'Invalid or expired server access token' },
      });
      expect((await WsClient.refused(app.baseUrl, session.server.bootstrapToken)).status).toBe(401);
    });

    it('is accepted with a live server token and listed by the admin API', async () => {
      const session = await onlineServer(app);
      await connect(session.accessToken);
      const list = () => app.admin.get('/admin/realtime/connections');
      // The connection's row is written after the upgrade, not before the socket opens.
      await eventually(
        async () => ((await list()).body as Array<{ serverID: number }>).some((c) => c.serverID === session.serverID),
        'the connection listed',
        5_000,
      );
      const listed = await list();
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual(
        expect.arrayContaining([
          {
            connectionId: expect.any(String),
            serverID: session.serverID,
            instanceId: expect.any(String),
            remoteAddress: expect.any(String),
            connectedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/),
          },
        ]),
      );
    });
  });

  describe('frames', () => {
    it('answers malformed and unknown frames with an error frame and keeps the connection', async () => {
      const session = await onlineServer(app);
      const client = await connect(session.accessToken);
      const cases: Array<[string, string]> = [
        ['not json', 'Malformed frame: not JSON'],
        ['[1,2]', 'Malformed frame: expected {"event", "data"}'],
        ['{"data":{}}', 'Malformed frame: event must be a string'],
        ['{"event":"dance","data":{}}', 'Unknown event "dance"'],
        ['{"event":"chat","data":"hi"}', 'Malformed frame: data of "chat" must be an object'],
      ];
      for (const [raw, message] of cases) {
        const from = client.frames.length;
        client.sendRaw(raw);
        const frame = await client.next((f) => f.event === 'error', 5000, from);
        expect(frame).toEqual({ event: 'error', data: badRequest(message) });
      }
      const player = await onlinePlayer(app, session);
      const ack = await client.request('resume_session', { uid: player.uid, accessToken: player.accessToken });
      expect(ack.data.ok).toBe(true);
    });
  });

  describe('a handler that fails', () => {
    it('answers an error frame mapped like HTTP (a 5xx without its cause) and keeps the connection', async () => {
      const session = await onlineServer(app);
      const client = await connect(session.accessToken);
      const player = await onlinePlayer(app, session);
      const realtime = app.get(RealtimeService);
      const failing = jest.spyOn(realtime, 'resumeSession').mockRejectedValueOnce(new Error('resume exploded'));
      const refusing = jest.spyOn(realtime, 'chat').mockRejectedValueOnce(new BadRequestError('no chat today'));
      try {
        expect(
          await client.request('resume_session', { uid: player.uid, accessToken: player.accessToken }, 'error'),
        ).toEqual({
          event: 'error',
          data: { error: 'INTERNAL_ERROR', message: 'Internal server error' },
        });
        expect(await client.request('chat', { uid: player.uid, message: 'hello' }, 'error')).toEqual({
          event: 'error',
          data: badRequest('no chat today'),
        });
        expect(failing).toHaveBeenCalledTimes(1);
      } finally {
        failing.mockRestore();
        refusing.mockRestore();
      }
      // The same connection still answers.
      expect(
        (await client.request('resume_session', { uid: player.uid, accessToken: player.accessToken })).data,
      ).toEqual({
        uid: player.uid,
        ok: true,
        expiresIn: expect.any(Number),
      });
    });
  });

  describe('resume_session', () => {
    it('acknowledges and answers ok:false with the error code for a bad token or uid', async () => {
      const session = await onlineServer(app);
      const player = await onlinePlayer(app, session);
      const client = await connect(session.accessToken);
      expect(await client.request('resume_session', { uid: player.uid, accessToken: player.accessToken })).toEqual({
        event: 'resume_session',
        data: { uid: player.uid, ok: true, expiresIn: 600 },
      });
      expect(await client.request('resume_session', { uid: player.uid, accessToken: 'dead' })).toEqual({
        event: 'resume_session',
        data: { uid: player.uid, ok: false, error: 'UNAUTHORIZED', message: 'Invalid or expired player access token' },
      });
      expect(
        (await client.request('resume_session', { uid: player.uid + 1, accessToken: player.accessToken })).data,
      ).toEqual({
        uid: player.uid + 1,
        ok: false,
        error: 'UNAUTHORIZED',
        message: 'The access token does not belong to this uid',
      });
      expect((await client.request('resume_session', { uid: 'x', accessToken: player.accessToken })).data).toEqual({
        uid: null,
        ok: false,
        ...badLines('uid must be a positive integer'),
      });
    });

    it('does not move a session another server holds unless the two are one network (handover off here)', async () => {
      const a = await onlineServer(app);
      const b = await onlineServer(app);
      const player = await onlinePlayer(app, a);
      const client = await connect(b.accessToken);
      expect(
        (await client.request('resume_session', { uid: player.uid, accessToken: player.accessToken })).data,
      ).toEqual({
        uid: player.uid,
        ok: false,
        error: 'UNAUTHORIZED',
        message: "The player session is bound to a server outside this server's network",
      });
      const [row] = await app.sql<{ server_id: number }>(
        'SELECT ss.server_id FROM player_session ps JOIN server_session ss ON ss.id = ps.server_session_id WHERE ps.uid = $1',
        [player.uid],
      );
      expect(row.server_id).toBe(a.serverID);
      const viaB = await app.http.post(
        '/player/options',
        { uid: player.uid, accessToken: player.accessToken, options: {} },
        { token: b.accessToken },
      );
      expect(viaB.status).toBe(401);
    });
  });

  describe('kick_player', () => {
    it('reaches the game server where the player is bound when an admin bans them, and only that one', async () => {
      const a = await onlineServer(app);
      const b = await onlineServer(app);
      const player = await onlinePlayer(app, a);
      const onA = await connect(a.accessToken);
      const onB = await connect(b.accessToken);
      await app.admin.post(`/admin/players/${player.uid}/ban`, {
        reason: 'griefing',
        until: '2099-05-06T07:08:09',
        message: 'Banned for griefing',
      });
      const kick = await onA.next((frame) => frame.event === 'kick_player');
      expect(kick).toEqual({
        event: 'kick_player',
        data: { uid: player.uid, message: 'Banned for griefing', reason: 'griefing', until: '2099-05-06T07:08:09' },
      });
      await sleep(200);
      expect(onB.frames.filter((frame) => frame.event === 'kick_player')).toEqual([]);
    });

    const kickedFrame = (uid: number) => ({
      event: 'kick_player',
      data: { uid, message: 'You are banned: away', reason: 'away', until: '' },
    });
    /** The kept frames of the server's sessions, once the event reached the outbox (it is written as the event is heard). */
    async function keptFor(serverID: number): Promise<Array<Record<string, unknown>>> {
      const query = () =>
        app.sql(
          'SELECT frame, delivered_at IS NULL AS pending FROM realtime_outbox WHERE server_session_id IN (SELECT id FROM server_session WHERE server_id = $1)',
          [serverID],
        );
      await eventually(async () => (await query()).length > 0, 'the kick is kept');
      return query();
    }

    it('waits for a game server whose socket is reconnecting, and is delivered once when it is back', async () => {
      const server = await onlineServer(app);
      const player = await onlinePlayer(app, server);
      const first = await connect(server.accessToken);
      first.close();
      await first.closed;
      expect((await app.admin.post(`/admin/players/${player.uid}/ban`, { reason: 'away' })).status).toBe(200);
      // Kept for the session, not delivered yet.
      expect(await keptFor(server.serverID)).toEqual([{ frame: kickedFrame(player.uid), pending: true }]);

      // The plugin refreshes after 4001 and reconnects with the new token of the same session.
      const refreshed = await app.http.get('/server/refresh', { token: server.accessToken });
      expect(refreshed.status).toBe(200);
      const second = await connect(refreshed.body.accessToken as string);
      expect(await second.next((frame) => frame.event === 'kick_player')).toEqual(kickedFrame(player.uid));
      expect(
        await app.sql(
          'SELECT delivered_at IS NULL AS pending FROM realtime_outbox WHERE server_session_id IN (SELECT id FROM server_session WHERE server_id = $1)',
          [server.serverID],
        ),
      ).toEqual([{ pending: false }]);

      // Delivered once: the next reconnect gets nothing.
      second.close();
      await second.closed;
      const third = await connect(refreshed.body.accessToken as string);
      await sleep(300);
      expect(third.frames.filter((frame) => frame.event === 'kick_player')).toEqual([]);
    });

    it('is kept with the ban: a kick whose event never went out (the process stopped) still reaches the reconnecting server', async () => {
      const server = await onlineServer(app);
      const player = await onlinePlayer(app, server);
      const first = await connect(server.accessToken);
      first.close();
      await first.closed;
      // The ban commits, then its event is lost (as if the process stopped right after the commit).
      const bus = app.get<EventBus>(EVENT_BUS);
      const publish = bus.publish.bind(bus);
      const lost = jest
        .spyOn(bus, 'publish')
        .mockImplementation((event) => (event.type === 'player.kicked' ? Promise.resolve() : publish(event)));
      try {
        expect((await app.admin.post(`/admin/players/${player.uid}/ban`, { reason: 'away' })).status).toBe(200);
      } finally {
        lost.mockRestore();
      }
      expect(
        await app.sql(
          'SELECT frame, delivered_at IS NULL AS pending FROM realtime_outbox WHERE server_session_id IN (SELECT id FROM server_session WHERE server_id = $1)',
          [server.serverID],
        ),
      ).toEqual([{ frame: kickedFrame(player.uid), pending: true }]);
      const refreshed = await app.http.get('/server/refresh', { token: server.accessToken });
      const second = await connect(refreshed.body.accessToken as string);
      expect(await second.next((frame) => frame.event === 'kick_player')).toEqual(kickedFrame(player.uid));
    });

    it('reaches its game server when the session already holds its 100 undelivered player frames', async () => {
      const server = await onlineServer(app);
      const player = await onlinePlayer(app, server);
      const open = await connect(server.accessToken);
      // What a season's grant to 100 players online leaves for a plugin that never asked for them.
      await app.sql(
        `INSERT INTO realtime_outbox (event_id, server_session_id, frame, expires_at)
         SELECT gen_random_uuid(), s.id, '{"event":"collections_granted","data":{}}'::jsonb, now() + interval '10 minutes'
           FROM server_session s, generate_series(1, ${OUTBOX_LIMIT_PER_SESSION})
          WHERE s.server_id = $1 AND s.ended_at IS NULL`,
        [server.serverID],
      );
      expect((await app.admin.post(`/admin/players/${player.uid}/ban`, { reason: 'away' })).status).toBe(200);
      expect(await open.next((frame) => frame.event === 'kick_player')).toEqual(kickedFrame(player.uid));
    });

    it('is sent at once to an open socket and not kept for a later one', async () => {
      const server = await onlineServer(app);
      const player = await onlinePlayer(app, server);
      const open = await connect(server.accessToken);
      await app.admin.post(`/admin/players/${player.uid}/ban`, { reason: 'away' });
      expect(await open.next((frame) => frame.event === 'kick_player')).toEqual(kickedFrame(player.uid));
      open.close();
      await open.closed;
      const again = await connect(server.accessToken);
      await sleep(300);
      expect(again.frames.filter((frame) => frame.event === 'kick_player')).toEqual([]);
    });

    it('is forgotten once it expired (one server-token lifetime)', async () => {
      const server = await onlineServer(app);
      const player = await onlinePlayer(app, server);
      await app.admin.post(`/admin/players/${player.uid}/ban`, { reason: 'away' });
      await keptFor(server.serverID);
      await app.sql(
        `UPDATE realtime_outbox SET expires_at = now() - interval '1 second' WHERE server_session_id IN (SELECT id FROM server_session WHERE server_id = $1)`,
        [server.serverID],
      );
      const late = await connect(server.accessToken);
      await sleep(300);
      expect(late.frames.filter((frame) => frame.event === 'kick_player')).toEqual([]);
    });
  });

  describe('chat', () => {
    it('reaches every connected game server, decorated with the selected titles', async () => {
      const a = await onlineServer(app);
      const b = await onlineServer(app);
      const player = await onlinePlayer(app, a, { displayName: 'Rin' });
      await grantTitle(app, player.uid, 'rhythmc:title.chat_star', {
        title: '&6Star',
        description: ['Shines', 'bright'],
        rarity: 'EPIC',
        position: true,
      });
      const set = await app.http.post(
        '/player/options',
        { uid: player.uid, accessToken: player.accessToken, options: {}, playerPrefix: 'rhythmc:title.chat_star' },
        { token: a.accessToken },
      );
      expect(set.status).toBe(200);
      const onA = await connect(a.accessToken);
      const onB = await connect(b.accessToken);
      await sleep(100);

      onA.send('chat', { uid: player.uid, message: 'hello network' });
      const expected = {
        event: 'chat',
        data: {
          uid: player.uid,
          username: player.username,
          displayName: 'Rin',
          message: 'hello network',
          serverID: a.serverID,
          serverName: a.server.serverName,
          prefix: {
            key: 'rhythmc:title.chat_star',
            title: '&6Star',
            description: ['Shines', 'bright'],
            rarity: 'EPIC',
            position: true,
          },
          suffix: null,
        },
      };
      expect(await onB.next((frame) => frame.event === 'chat' && frame.data.message === 'hello network')).toEqual(
        expected,
      );
      expect(await onA.next((frame) => frame.event === 'chat' && frame.data.message === 'hello network')).toEqual(
        expected,
      );
    });

    it('refuses chat from a player not bound to this server, and invalid messages', async () => {
      const a = await onlineServer(app);
      const b = await onlineServer(app);
      const player = await onlinePlayer(app, a);
      const onB = await connect(b.accessToken);
      expect(await onB.request('chat', { uid: player.uid, message: 'hi' }, 'error')).toEqual({
        event: 'error',
        data: { error: 'UNAUTHORIZED', message: 'The player has no live session on this server' },
      });
      expect((await onB.request('chat', { uid: player.uid, message: '' }, 'error')).data.message).toBe(
        'message must be a non-empty string of at most 256 characters',
      );
      expect((await onB.request('chat', { uid: player.uid, message: 'x'.repeat(257) }, 'error')).data.error).toBe(
        'BAD_REQUEST',
      );
    });
  });

  describe('session lifecycle', () => {
    it('closes the socket with 4002 when a new login replaces the session', async () => {
      const session = await onlineServer(app);
      const client = await connect(session.accessToken);
      await loginServer(app, session.server);
      expect(await client.closed).toEqual({ code: 4002, reason: 'Session replaced by a new login' });
    });

    it('closes the socket with 4002 on server logout', async () => {
      const session = await onlineServer(app);
      const client = await connect(session.accessToken);
      expect((await app.http.post('/server/logout', undefined, { token: session.accessToken })).status).toBe(204);
      expect(await client.closed).toEqual({ code: 4002, reason: 'Server logged out' });
      const row = () =>
        app.sql('SELECT close_code, closed_at IS NOT NULL AS closed FROM ws_connection WHERE server_id = $1', [
          session.serverID,
        ]);
      // The close handler writes the row after the close frame went out (a write that may wait on
      // a batch PostgreSQL cancelled to break a deadlock, then run alone): wait for it, then check it exactly.
      await eventually(async () => (await row()).some((r) => r.closed === true), 'the connection row closed', 5_000);
      expect(await row()).toEqual([{ close_code: 4002, closed: true }]);
      const listed = await app.admin.get('/admin/realtime/connections');
      expect((listed.body as Array<{ serverID: number }>).filter((c) => c.serverID === session.serverID)).toEqual([]);
    });

    it('closes with 4002, at the next ping round, a socket whose session ended without the event reaching it', async () => {
      const ended = await onlineServer(app);
      const purged = await onlineServer(app);
      const live = await onlineServer(app);
      const [onEnded, onPurged, onLive] = [
        await connect(ended.accessToken),
        await connect(purged.accessToken),
        await connect(live.accessToken),
      ];
      // As if the server_session.ended event was heard before these sockets registered, or lost
      // while Redis was down: the rows change, nothing is published.
      await app.sql(`UPDATE server_session SET ended_at = now(), end_reason = 'admin' WHERE server_id = $1`, [
        ended.serverID,
      ]);
      await app.sql('DELETE FROM server_session WHERE server_id = $1', [purged.serverID]);
      await sleep(100);
      expect([onEnded, onPurged, onLive].map((client) => client.socket.readyState)).toEqual([WsOpen, WsOpen, WsOpen]);

      // The ping round's check (every 30 s), run now.
      await app.get(ConnectionRegistry).closeEndedSessions();
      expect(await onEnded.closed).toEqual({ code: 4002, reason: 'Server logged out by an admin' });
      expect(await onPurged.closed).toEqual({ code: 4002, reason: 'Server session ended' });
      expect(onLive.socket.readyState).toBe(WsOpen);
      const player = await onlinePlayer(app, live);
      expect(await onLive.request('resume_session', { uid: player.uid, accessToken: player.accessToken })).toEqual({
        event: 'resume_session',
        data: { uid: player.uid, ok: true, expiresIn: 600 },
      });
    });
  });
});

describe('Realtime with a short server token lifetime', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { SERVER_TOKEN_TTL_SECONDS: '32' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('closes the socket with 4001 thirty seconds before the server token expires', async () => {
    const session = await onlineServer(app);
    const client = await WsClient.connect(app.baseUrl, session.accessToken);
    const started = Date.now();
    expect(await client.closed).toEqual({ code: 4001, reason: 'Token expiring; refresh and reconnect' });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThan(1000);
    expect(elapsed).toBeLessThan(4000);
  });
});

describe('Realtime with a short player token lifetime', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { PLAYER_TOKEN_TTL_SECONDS: '4' } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('keeps a resumed player token valid past its original TTL, and lets an unresumed one expire', async () => {
    const session = await onlineServer(app);
    const client = await WsClient.connect(app.baseUrl, session.accessToken);
    const idle = await onlinePlayer(app, session);
    const loggedInAt = Date.now();
    const resumed = await onlinePlayer(app, session);
    const until = (ms: number) => sleep(Math.max(0, loggedInAt + ms - Date.now()));

    await until(1500);
    expect(
      (await client.request('resume_session', { uid: resumed.uid, accessToken: resumed.accessToken })).data,
    ).toEqual({ uid: resumed.uid, ok: true, expiresIn: 4 });
    // Past the original 4 s TTL of both tokens; the resumed one now lives until about 5.5 s.
    await until(4300);
    const ok = await app.http.post(
      '/player/options',
      { uid: resumed.uid, accessToken: resumed.accessToken, options: {} },
      { token: session.accessToken },
    );
    expect(ok.status).toBe(200);
    const expired = await app.http.post(
      '/player/options',
      { uid: idle.uid, accessToken: idle.accessToken, options: {} },
      { token: session.accessToken },
    );
    expect(expired.status).toBe(401);
    client.socket.terminate();
  });
});

describe('Chat flood', () => {
  let app: TestApp;
  const clients: WsClient[] = [];

  beforeAll(async () => {
    app = await startTestApp({ env: { CHAT_LINES_PER_SECOND: '1', CHAT_BURST: '5' } });
  });
  afterAll(async () => {
    for (const client of clients.splice(0)) client.socket.terminate();
    await app.close();
  });

  it('is cut at the limit of the server session across its sockets, never fanned out; other servers keep chatting', async () => {
    const flooder = await onlineServer(app);
    const quiet = await onlineServer(app);
    const loud = await onlinePlayer(app, flooder);
    const calm = await onlinePlayer(app, quiet);
    const onFlooder = [
      await WsClient.connect(app.baseUrl, flooder.accessToken),
      await WsClient.connect(app.baseUrl, flooder.accessToken),
    ];
    const onQuiet = await WsClient.connect(app.baseUrl, quiet.accessToken);
    clients.push(...onFlooder, onQuiet);
    await sleep(100);

    // Eight lines over two sockets of one session: one budget of five.
    for (let i = 0; i < 8; i++) onFlooder[i % 2].send('chat', { uid: loud.uid, message: `flood ${i}` });
    onQuiet.send('chat', { uid: calm.uid, message: 'still here' });

    // The quiet server's line reaches every socket although the flood came first.
    for (const socket of onFlooder)
      expect((await socket.next((f) => f.event === 'chat' && f.data.message === 'still here')).data.serverID).toBe(
        quiet.serverID,
      );
    expect((await onQuiet.next((f) => f.event === 'chat' && f.data.message === 'still here')).data.uid).toBe(calm.uid);
    const fromFlooder = () =>
      onQuiet.frames
        .filter((f) => f.event === 'chat' && f.data.serverID === flooder.serverID)
        .map((f) => Number(String(f.data.message).slice('flood '.length)));
    await eventually(() => fromFlooder().length === 5, 'five flood lines');
    const errorsOf = (socket: WsClient) => socket.frames.filter((f) => f.event === 'error');
    await eventually(() => errorsOf(onFlooder[0]).length + errorsOf(onFlooder[1]).length === 3, 'three refusals');
    await sleep(200);

    expect([...errorsOf(onFlooder[0]), ...errorsOf(onFlooder[1])]).toEqual(
      Array.from({ length: 3 }, () => ({
        event: 'error',
        data: { error: 'RATE_LIMITED', message: 'Too many requests; retry in 1 s' },
      })),
    );
    // Five distinct lines of the eight; each socket's lines in the order it sent them (two sockets
    // are two streams: their lines may interleave either way).
    const delivered = fromFlooder();
    expect(new Set(delivered).size).toBe(5);
    for (const parity of [0, 1]) {
      const ofSocket = delivered.filter((line) => line % 2 === parity);
      expect(ofSocket).toEqual([...ofSocket].sort((x, y) => x - y));
    }
    // The connections stay open, and the budget refills at the rate.
    await sleep(1_100);
    onFlooder[1].send('chat', { uid: loud.uid, message: 'after the pause' });
    await onQuiet.next((f) => f.event === 'chat' && f.data.message === 'after the pause');
  });
});

describe('Sockets per server session', () => {
  let app: TestApp;
  const clients: WsClient[] = [];

  beforeAll(async () => {
    app = await startTestApp({ env: { CHAT_LINES_PER_SECOND: '1', CHAT_BURST: '5' } });
  });
  afterAll(async () => {
    for (const client of clients.splice(0)) client.socket.terminate();
    await app.close();
  });

  it('300 sockets of one server: only the newest 3 stay open, and another server is served as before', async () => {
    const flooder = await onlineServer(app);
    const quiet = await onlineServer(app);
    const loud = await onlinePlayer(app, flooder);
    const calm = await onlinePlayer(app, quiet);
    const onQuiet = await WsClient.connect(app.baseUrl, quiet.accessToken);
    clients.push(onQuiet);

    const flood: WsClient[] = [];
    for (let i = 0; i < 297; i += 33) {
      const batch = await Promise.all(
        Array.from({ length: 33 }, () => WsClient.connect(app.baseUrl, flooder.accessToken)),
      );
      flood.push(...batch);
    }
    // The last three one by one: they are the newest.
    for (let i = 0; i < 3; i++) flood.push(await WsClient.connect(app.baseUrl, flooder.accessToken));
    clients.push(...flood);
    const kept = flood.slice(-3);

    const closed = await Promise.all(flood.slice(0, -3).map((client) => client.closed));
    expect(new Set(closed.map((close) => `${close.code} ${close.reason}`))).toEqual(
      new Set(['4003 Too many connections for this server session; the newest is kept']),
    );
    for (const client of kept) expect(client.socket.readyState).toBe(client.socket.OPEN);
    const connections = app.get(ConnectionRegistry);
    await eventually(() => connections.connectionCount === 4, 'the closed sockets are gone');
    const rows = () =>
      app.sql<{ code: number | null; n: number }>(
        `SELECT close_code AS code, count(*)::int AS n FROM ws_connection WHERE server_id = $1
          GROUP BY close_code ORDER BY close_code NULLS LAST`,
        [flooder.serverID],
      );
    await eventually(async () => (await rows())[0]?.n === 297, 'every close recorded');
    expect(await rows()).toEqual([
      { code: 4003, n: 297 },
      { code: null, n: 3 },
    ]);

    // Chat: one budget for the three, and every line written to four sockets, not 301.
    for (let i = 0; i < 8; i++) kept[i % 3].send('chat', { uid: loud.uid, message: `flood ${i}` });
    onQuiet.send('chat', { uid: calm.uid, message: 'still here' });
    for (const client of [onQuiet, ...kept])
      await client.next((f) => f.event === 'chat' && f.data.message === 'still here');
    const flooded = () => onQuiet.frames.filter((f) => f.event === 'chat' && f.data.serverID === flooder.serverID);
    await eventually(() => flooded().length === 5, 'five flood lines');
    await sleep(200);
    expect(new Set(flooded().map((f): unknown => f.data.message)).size).toBe(5);
    expect(onQuiet.frames.filter((f) => f.event === 'chat')).toHaveLength(6);
    expect(kept.flatMap((client) => client.frames.filter((f) => f.event === 'error'))).toHaveLength(3);
    for (const client of flood.slice(0, -3)) expect(client.frames.filter((f) => f.event === 'chat')).toEqual([]);
  });

  it('a reconnecting plugin always gets in: its new socket closes the oldest, and frames flow on it', async () => {
    const session = await onlineServer(app);
    const player = await onlinePlayer(app, session);
    const old = [
      await WsClient.connect(app.baseUrl, session.accessToken),
      await WsClient.connect(app.baseUrl, session.accessToken),
      await WsClient.connect(app.baseUrl, session.accessToken),
    ];
    const fresh = await WsClient.connect(app.baseUrl, session.accessToken);
    clients.push(...old, fresh);
    expect((await old[0].closed).code).toBe(4003);
    expect(old.slice(1).map((client) => client.socket.readyState)).toEqual([WsOpen, WsOpen]);
    expect(await fresh.request('resume_session', { uid: player.uid, accessToken: player.accessToken })).toEqual({
      event: 'resume_session',
      data: { uid: player.uid, ok: true, expiresIn: 600 },
    });
  });
});

(multiInstanceAvailable() ? describe : describe.skip)('Two service instances on one PostgreSQL and Redis', () => {
  let a: TestApp;
  let b: TestApp;
  const clients: WsClient[] = [];

  beforeAll(async () => {
    a = await startTestApp({ env: { THROTTLE_LOGIN_LIMIT: '1000' } });
    b = await startTestApp({ shareWith: a, env: { THROTTLE_LOGIN_LIMIT: '1000' } });
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.socket.terminate();
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('a ban issued through instance A kicks the player on a game server connected to instance B', async () => {
    const session = await onlineServer(a);
    const player = await onlinePlayer(a, session);
    const onB = await WsClient.connect(b.baseUrl, session.accessToken);
    clients.push(onB);
    await a.admin.post(`/admin/players/${player.uid}/ban`, { reason: 'x' });
    expect(await onB.next((frame) => frame.event === 'kick_player')).toEqual({
      event: 'kick_player',
      data: { uid: player.uid, message: 'You are banned: x', reason: 'x', until: '' },
    });
  });

  it('a kick issued while the game server reconnects from A to B is delivered by B', async () => {
    const session = await onlineServer(a);
    const player = await onlinePlayer(a, session);
    const onA = await WsClient.connect(a.baseUrl, session.accessToken);
    clients.push(onA);
    onA.close();
    await onA.closed;
    expect((await a.admin.post(`/admin/players/${player.uid}/ban`, { reason: 'moved' })).status).toBe(200);
    const kept = () =>
      a.sql(
        'SELECT 1 FROM realtime_outbox WHERE server_session_id IN (SELECT id FROM server_session WHERE server_id = $1)',
        [session.serverID],
      );
    await eventually(async () => (await kept()).length > 0, 'the kick is kept');
    const refreshed = await b.http.get('/server/refresh', { token: session.accessToken });
    const onB = await WsClient.connect(b.baseUrl, refreshed.body.accessToken as string);
    clients.push(onB);
    expect(await onB.next((frame) => frame.event === 'kick_player')).toEqual({
      event: 'kick_player',
      data: { uid: player.uid, message: 'You are banned: moved', reason: 'moved', until: '' },
    });
    const outbox = () =>
      a.sql(
        'SELECT count(*)::int AS n, bool_and(delivered_at IS NOT NULL) AS delivered FROM realtime_outbox WHERE server_session_id IN (SELECT id FROM server_session WHERE server_id = $1)',
        [session.serverID],
      );
    // Marked delivered after the frame went out: wait for that, and that no second kick follows.
    await eventually(async () => (await outbox())[0]?.delivered === true, 'the kick marked delivered', 5_000);
    await sleep(300);
    expect(onB.frames.filter((frame) => frame.event === 'kick_player')).toHaveLength(1);
    expect(await outbox()).toEqual([{ n: 1, delivered: true }]);
  });

  it('chat sent on A reaches a game server connected to B', async () => {
    const s1 = await onlineServer(a);
    const s2 = await onlineServer(a);
    const player = await onlinePlayer(a, s1);
    const onA = await WsClient.connect(a.baseUrl, s1.accessToken);
    const onB = await WsClient.connect(b.baseUrl, s2.accessToken);
    clients.push(onA, onB);
    await sleep(100);
    onA.send('chat', { uid: player.uid, message: 'across instances' });
    const frame = await onB.next((f) => f.event === 'chat' && f.data.message === 'across instances');
    expect(frame.data).toMatchObject({ uid: player.uid, serverID: s1.serverID });
    await sleep(200);
    // Delivered once per game server, not once per instance.
    expect(onB.frames.filter((f) => f.event === 'chat' && f.data.message === 'across instances')).toHaveLength(1);
  });

  it('a re-login through B closes the socket held on A with 4002, and A refuses the old token from then on', async () => {
    const session = await onlineServer(a);
    const onA = await WsClient.connect(a.baseUrl, session.accessToken);
    clients.push(onA);
    // A has looked the token up (and memoised the live session).
    expect((await a.http.get('/server/collections', { token: session.accessToken })).status).toBe(200);
    const relogin = await b.http.post(
      '/server/login',
      { pluginVersion: 1, pluginSHA: 'x' },
      { token: session.server.bootstrapToken },
    );
    expect(relogin.status).toBe(200);
    expect((await onA.closed).code).toBe(4002);
    // The event that closed the socket also made A forget the session: no second of grace.
    const old = await a.http.get('/server/collections', { token: session.accessToken });
    expect(old.status).toBe(401);
    expect(old.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid or expired server access token' });
    expect((await a.http.get('/server/collections', { token: relogin.body.accessToken as string })).status).toBe(200);
  });

  it('shares the chat budget of a server session across instances', async () => {
    const env = { CHAT_LINES_PER_SECOND: '1', CHAT_BURST: '5' };
    const chattyA = await startTestApp({ env });
    const chattyB = await startTestApp({ shareWith: chattyA, env });
    try {
      const session = await onlineServer(chattyA);
      const listener = await onlineServer(chattyA);
      const player = await onlinePlayer(chattyA, session);
      const sockets = [
        await WsClient.connect(chattyA.baseUrl, session.accessToken),
        await WsClient.connect(chattyB.baseUrl, session.accessToken),
      ];
      const onListener = await WsClient.connect(chattyA.baseUrl, listener.accessToken);
      clients.push(...sockets, onListener);
      await sleep(100);
      for (let i = 0; i < 8; i++) sockets[i % 2].send('chat', { uid: player.uid, message: `line ${i}` });
      const refusals = () => sockets.flatMap((socket) => socket.frames.filter((f) => f.event === 'error'));
      await eventually(() => refusals().length === 3, 'three refusals');
      await onListener.next(
        () => onListener.frames.filter((f) => f.event === 'chat' && f.data.serverID === session.serverID).length === 5,
      );
      await sleep(200);
      expect(refusals().map((f): unknown => f.data.error)).toEqual(['RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED']);
      expect(onListener.frames.filter((f) => f.event === 'chat')).toHaveLength(5);
    } finally {
      await chattyB.close();
      await chattyA.close();
    }
  });

  it('shares the player login limit of a server session', async () => {
    const limitedA = await startTestApp({ env: { THROTTLE_PLAYER_LOGIN_LIMIT: '3' } });
    const limitedB = await startTestApp({ shareWith: limitedA, env: { THROTTLE_PLAYER_LOGIN_LIMIT: '3' } });
    try {
      const player = await createPlayer(limitedA);
      const session = await onlineServer(limitedA);
      const attempt = (app: TestApp) =>
        app.http.post(
          '/player/login',
          { mode: 'TOKEN', version: 1, authToken: 'wrong' },
          { token: session.accessToken },
        );
      const statuses = [
        (await attempt(limitedA)).status,
        (await attempt(limitedB)).status,
        (await attempt(limitedA)).status,
        (await attempt(limitedB)).status,
      ];
      expect(statuses).toEqual([401, 401, 401, 429]);
      expect(await loginPlayer(limitedA, session, player).catch((error: Error) => error.message)).toMatch(
        /^loginPlayer: 429/,
      );
    } finally {
      await limitedB.close();
      await limitedA.close();
    }
  });
});
