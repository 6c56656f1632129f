import type { Type } from '@nestjs/common';
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { gameplayPayload } from '../factories/upload.factory';
import { LogCapture } from '../support/log-capture';
import { indexAgainstSql } from '../support/rank-index-check';
import { startTestApp, TestApp } from '../support/test-app';
import { SNAPSHOT_FILE } from '../../src/ranking/rank-index/memory-rank-index';
import { RankIndex } from '../../src/ranking/rank-index/rank-index';

/**
 * The in-process rank index across restarts (docs/decisions.md "Rank index at start-up"): a clean
 * stop writes DATA_DIR/rank-index.snapshot, a start reads it and catches up with the players whose
 * rating rows changed after its watermark; a damaged or missing snapshot means a full load. After
 * every start the index itself (not the SQL fallback) must answer each player's positions exactly
 * as SQL counts them.
 */
const rankIndexOf = (app: TestApp) => app.get(RankIndex as unknown as Type<RankIndex>);

let clock = Date.now() - 3_600_000;

async function upload(
  app: TestApp,
  server: TestServerSession,
  player: Pick<TestPlayerSession, 'uid' | 'accessToken'>,
  levelID: number,
  acc: number,
  time = (clock += 1_000),
): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = gameplayPayload(levelID, time, { acc });
  const response = await app.http.post(
    '/player/upload',
    {
      player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: payload.time + 250 },
      server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
      payload,
    },
    { token: server.accessToken },
  );
  if (response.status !== 200) throw new Error(`upload: ${response.status} ${response.text}`);
  return response as { status: number; body: Record<string, unknown> };
}

/** The messages of the log lines since `from` that match `pattern`. */
const messages = (logs: LogCapture, from: number, pattern: RegExp) =>
  logs.lines
    .slice(from)
    .map((line) => (JSON.parse(line) as { msg?: unknown }).msg)
    .filter((msg): msg is string => typeof msg === 'string')
    .filter((msg) => pattern.test(msg));
/** The messages of the rank index's load lines since `from`. */
const loadLines = (logs: LogCapture, from: number) => messages(logs, from, /^Rank index (loaded|snapshot not used)/);

describe('the in-process rank index snapshot', () => {
  const logs = new LogCapture();
  let app: TestApp;
  let server: TestServerSession;
  let players: TestPlayerSession[];
  let snapshot: string;

  beforeAll(async () => {
    app = await startTestApp({ redis: false, env: { LOG_LEVEL: 'info' }, logDestination: logs });
    expect(rankIndexOf(app).kind).toBe('memory');
    snapshot = join(app.env.DATA_DIR, SNAPSHOT_FILE);
    server = await onlineServer(app);
    const charts = [601, 602, 603].map((levelId) => ({
      levelId,
      name: `Chart ${levelId}`,
      difficultyConstant: levelId - 590,
      version: '1.0',
      active: true,
    }));
    expect((await app.admin.put('/admin/charts', charts)).status).toBe(200);
    players = [];
    for (let i = 0; i < 6; i++) players.push(await onlinePlayer(app, server));
    const tie = clock + 500_000;
    // Ties on acc and on the time reached, and an acc with five decimals (kept outside the 12-byte keys).
    await upload(app, server, players[0], 601, 99.5, tie);
    await upload(app, server, players[1], 601, 99.5, tie);
    await upload(app, server, players[2], 601, 99.5);
    await upload(app, server, players[3], 601, 97.12345);
    await upload(app, server, players[4], 602, 100);
    await upload(app, server, players[5], 602, 98.25);
    await upload(app, server, players[1], 603, 96);
  });
  afterAll(async () => {
    await app?.close();
  });

  it('writes the snapshot at a clean stop and starts from it', async () => {
    const from = logs.lines.length;
    // A temporary file an interrupted write left behind is removed by the next write.
    const leftover = `${snapshot}.1.0badf00d.tmp`;
    writeFileSync(leftover, 'half a snapshot');
    await app.restart();
    expect(readFileSync(snapshot).subarray(-4).toString('latin1')).toBe('RKIX');
    expect(existsSync(leftover)).toBe(false);
    // The stop wrote the blocks packed afresh (a load's density for the next start).
    expect(messages(logs, from, /^Rank index snapshot written/)).toEqual([
      expect.stringMatching(/^Rank index snapshot written \(repacked\): [\d.]+ MiB at watermark \d+/),
    ]);
    expect(loadLines(logs, from)).toEqual([
      expect.stringMatching(
        /^Rank index loaded from the snapshot at watermark \d+ and 0 players changed since: 6 ranked players, 7 chart entries on 3 charts, .* 1 kept wide\)/,
      ),
    ]);
    const { index, sql } = await indexAgainstSql(app);
    expect(index).toEqual(sql);
  });

  it('catches up with a new best, a new player and a voided only play (rating row deleted) made after the snapshot', async () => {
    await app.restart();
    const old = `${snapshot}.old`;
    copyFileSync(snapshot, old);

    await upload(app, server, players[2], 601, 100); // a new best: from third to first
    await upload(app, server, players[0], 602, 99); // a new chart for a player
    const newcomer = await onlinePlayer(app, server);
    await upload(app, server, newcomer, 603, 99.9);
    const [only] = await app.sql<{ id: string }>('SELECT id FROM play_record WHERE uid = $1', [players[5].uid]);
    expect((await app.admin.post(`/admin/plays/${only.id}/void`, { reason: 'test' })).status).toBe(200);
    expect(await app.sql('SELECT uid FROM player_rating WHERE uid = $1', [players[5].uid])).toEqual([]);
    const [{ tombstones }] = await app.sql<{ tombstones: number }>(
      'SELECT count(*)::int AS tombstones FROM rank_change_tombstone WHERE uid = $1',
      [players[5].uid],
    );
    expect(tombstones).toBe(1);

    // Start from the snapshot taken before those changes.
    const from = logs.lines.length;
    await app.restart(() => copyFileSync(old, snapshot));
    expect(loadLines(logs, from)).toEqual([
      expect.stringMatching(
        /^Rank index loaded from the snapshot at watermark \d+ and 4 players changed since: 6 ranked players, 8 chart entries on 3 charts/,
      ),
    ]);
    const { index, sql } = await indexAgainstSql(app);
    expect(index).toEqual(sql);
    expect(sql[0]).toEqual([String(players[0].uid), 601, { siteAhead: expect.any(Number), trackAhead: 1 }]);

    // And uploads after the catch-up answer the ranks SQL counts.
    const answer = await upload(app, server, players[1], 601, 99.75);
    expect(answer.body).toMatchObject({ trackRank: 2 });
    const after = await indexAgainstSql(app);
    expect(after.index).toEqual(after.sql);
  });

  it('loads from the tables when the snapshot is damaged, missing or truncated', async () => {
    await app.restart(); // a fresh snapshot
    let from = logs.lines.length;
    await app.restart(() => {
      const bytes = readFileSync(snapshot);
      bytes[10] ^= 0xff; // a flipped byte in the site's keys
      writeFileSync(snapshot, bytes);
    });
    expect(loadLines(logs, from)).toEqual([
      'Rank index snapshot not used (checksum mismatch); loading from the tables',
      expect.stringMatching(/^Rank index loaded from the tables: 6 ranked players, 8 chart entries on 3 charts/),
    ]);
    let compared = await indexAgainstSql(app);
    expect(compared.index).toEqual(compared.sql);

    from = logs.lines.length;
    await app.restart(() => rmSync(snapshot));
    expect(loadLines(logs, from)).toEqual([
      'Rank index snapshot not used (no snapshot); loading from the tables',
      expect.stringMatching(/^Rank index loaded from the tables: /),
    ]);

    from = logs.lines.length;
    await app.restart(() => writeFileSync(snapshot, readFileSync(snapshot).subarray(0, 100)));
    expect(loadLines(logs, from)).toEqual([
      'Rank index snapshot not used (not a rank index snapshot); loading from the tables',
      expect.stringMatching(/^Rank index loaded from the tables: /),
    ]);
    compared = await indexAgainstSql(app);
    expect(compared.index).toEqual(compared.sql);
  });
});
