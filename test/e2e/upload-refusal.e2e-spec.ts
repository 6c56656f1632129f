import { onlineServer, TestServerSession } from '../factories/server.factory';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { PlayRecordRepository } from '../../src/upload/play-record.repository';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * A refused upload (POST /player/upload, 401) in every way the answer distinguishes: the status
 * and body the plugin reads, nothing stored, and the round trips it takes. The one upload
 * statement answers the reason (docs/decisions.md "Database functions: one file each"); the
 * service only words it, so a refusal is that one statement and no transaction after it.
 */
describe('A refused upload', () => {
  let app: TestApp;
  let server: TestServerSession;
  let repository: PlayRecordRepository;
  let time = Date.now() - 3_600_000;

  beforeAll(async () => {
    app = await startTestApp();
    server = await onlineServer(app);
    await defineCharts(app, [101]);
    repository = app.get(PlayRecordRepository);
  });
  afterAll(async () => {
    await app.close();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  /** Uploads a play of `uid` with `accessToken` through `via`, counting the upload statements it ran. */
  async function upload(via: TestServerSession, player: { uid: number; accessToken: string }) {
    const oneStatement = jest.spyOn(repository, 'uploadInOneStatement');
    const transactional = jest.spyOn(repository, 'insertRecordAndReadState');
    const erasedRead = jest.spyOn(repository, 'isErased');
    const payload = gameplayPayload(101, (time += 1_000));
    const response = await app.http.post(
      '/player/upload',
      {
        player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: payload.time + 250 },
        server: { serverID: via.serverID, serverName: via.body.serverName as string, country: 'DE' },
        payload,
      },
      { token: via.accessToken },
    );
    const statements = {
      oneStatement: oneStatement.mock.calls.length,
      transactional: transactional.mock.calls.length,
      erasedRead: erasedRead.mock.calls.length,
    };
    jest.restoreAllMocks();
    return { status: response.status, body: response.body as unknown, statements };
  }

  const unauthorized = (message: string) => ({ status: 401, body: { error: 'UNAUTHORIZED', message } });
  /** The refusal in one statement: no transactional path, no second read for the erasure. */
  const ONE_STATEMENT = { oneStatement: 1, transactional: 0, erasedRead: 0 };

  async function expectRefused(
    via: TestServerSession,
    player: { uid: number; accessToken: string },
    message: string,
  ): Promise<void> {
    const { status, body, statements } = await upload(via, player);
    expect({ status, body }).toEqual(unauthorized(message));
    expect(await app.sql('SELECT 1 FROM play_record WHERE uid = $1', [player.uid])).toEqual([]);
    expect(statements).toEqual(ONE_STATEMENT);
  }

  /** Moves the player's live session's token expiry and renewal back by the given seconds. */
  async function age(player: TestPlayerSession, expiredSecondsAgo: number, renewedSecondsAgo: number) {
    const moved = await app.sql(
      `UPDATE player_session SET token_expires_at = now() - make_interval(secs => $2),
              renewed_at = now() - make_interval(secs => $3)
        WHERE uid = $1 AND logged_out_at IS NULL RETURNING 1`,
      [player.uid, expiredSecondsAgo, renewedSecondsAgo],
    );
    expect(moved).toHaveLength(1);
  }

  it('an accepted upload is the one statement too (the control)', async () => {
    const player = await onlinePlayer(app, server);
    const { status, statements } = await upload(server, player);
    expect(status).toBe(200);
    expect(statements).toEqual(ONE_STATEMENT);
  });

  it('an unknown token', async () => {
    const player = await onlinePlayer(app, server);
    await expectRefused(server, { uid: player.uid, accessToken: 'forged' }, 'Invalid or expired player access token');
  });

  it('a logged-out session', async () => {
    const player = await onlinePlayer(app, server);
    const logout = await app.http.post(
      '/player/logout',
      { uid: player.uid, accessToken: player.accessToken },
      { token: server.accessToken },
    );
    expect(logout.status).toBe(204);
    await expectRefused(server, player, 'Invalid or expired player access token');
  });

  it('a banned player (the ban logged the session out)', async () => {
    const player = await onlinePlayer(app, server);
    expect((await app.admin.post(`/admin/players/${player.uid}/ban`, { reason: 'cheating' })).status).toBe(200);
    await expectRefused(server, player, 'Invalid or expired player access token');
  });

  it("another player's token", async () => {
    const [player, other] = [await onlinePlayer(app, server), await onlinePlayer(app, server)];
    await expectRefused(
      server,
      { uid: other.uid, accessToken: player.accessToken },
      'The access token does not belong to this uid',
    );
  });

  it('a live token of another server session', async () => {
    const elsewhere = await onlineServer(app);
    const player = await onlinePlayer(app, elsewhere);
    await expectRefused(server, player, 'The player session belongs to another server session');
  });

  it('an expired token of another server session', async () => {
    const elsewhere = await onlineServer(app);
    const player = await onlinePlayer(app, elsewhere);
    await age(player, 1, 1);
    await expectRefused(
      server,
      player,
      'The player access token has expired and the player has no online session under this server session',
    );
  });

  it('an expired token whose session was not renewed within two resync intervals', async () => {
    const player = await onlinePlayer(app, server);
    await age(player, 1, 2 * app.config.playerResyncIntervalSeconds + 1);
    await expectRefused(
      server,
      player,
      'The player access token has expired and the player session was not renewed within two resync intervals',
    );
  });

  it('an expired token renewed within two resync intervals is accepted', async () => {
    const player = await onlinePlayer(app, server);
    await age(player, 1, 1);
    expect((await upload(server, player)).status).toBe(200);
  });

  it("an erased player's uid", async () => {
    const player = await onlinePlayer(app, server);
    const erased = await app.admin.post(`/admin/players/${player.uid}/erase`, { confirm: player.username });
    expect(erased.status).toBe(200);
    await expectRefused(server, player, `Player ${player.uid} was erased: nothing is stored for this uid`);
  });
});
