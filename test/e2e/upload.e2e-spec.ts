import type { Type } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { loginServer, onlineServer, TestServerSession } from '../factories/server.factory';
import { createPlayer, loginPlayer, onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { PlayRecordRepository } from '../../src/upload/play-record.repository';
import { RatingRepository } from '../../src/upload/rating.repository';
import { RankSourceRepository } from '../../src/ranking/rank-source.repository';
import { startTestApp, TestApp } from '../support/test-app';
import { testDatabaseServerUrl, testRedisUrl } from '../setup/test-env';
import { formatLocalDateTime } from '../../src/common/time';
import { RankIndex } from '../../src/ranking/rank-index/rank-index';
import { CatalogService } from '../../src/catalog/catalog.service';
import { eventually, sleep } from '../support/wait';
import { GameplayPayload, gameplayPayload } from '../factories/upload.factory';
import { badField, badLines, badRequest } from '../support/bad-request';

/** The app's rank index (an abstract class is its DI token). */
const rankIndexOf = (app: TestApp) => app.get(RankIndex as unknown as Type<RankIndex>);

/**
 * The rank index answering nothing (ranks counted in SQL) and the first two SQL counts held until
 * release(): the two slots of the counts' gate (RankAnswerService) taken, the next in line waiting.
 */
function holdSqlCounts(app: TestApp): { held: () => number; release: () => void; restore: () => void } {
  const positions = jest.spyOn(rankIndexOf(app), 'positions').mockResolvedValue(null);
  const sources = app.get(RankSourceRepository);
  const count = sources.unbannedAhead.bind(sources);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = 0;
  const counts = jest.spyOn(sources, 'unbannedAhead').mockImplementation(async (...args) => {
    if (held < 2) {
      held++;
      await released;
    }
    return count(...args);
  });
  return {
    held: () => held,
    release: () => release(),
    restore: () => {
      release();
      counts.mockRestore();
      positions.mockRestore();
    },
  };
}

/** Plays of the last hour: the `time` check flags a payload.time older than SCORE_MAX_AGE_HOURS (24). */
let clock = Date.now() - 3_600_000;
/** A fresh payload.time for every play (the record key is player, level, time). */
const nextTime = () => (clock += 1_000);

type Payload = GameplayPayload;

const gameplay = (levelID: number, overrides: Record<string, unknown> = {}): Payload =>
  gameplayPayload(levelID, nextTime(), overrides);

function record(server: TestServerSession, player: Pick<TestPlayerSession, 'uid' | 'accessToken'>, payload: Payload) {
  return {
    player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: payload.time + 250 },
    server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
    payload,
  };
}

const upload = (app: TestApp, server: TestServerSession, body: unknown) =>
  app.http.post('/player/upload', body, { token: server.accessToken });

/** PUT /admin/charts with active charts of the given constants. */
async function putCharts(app: TestApp, charts: Array<[levelId: number, constant: number]>): Promise<void> {
  const response = await app.admin.put(
    '/admin/charts',
    charts.map(([levelId, difficultyConstant]) => ({
      levelId,
      name: `Chart ${levelId}`,
      difficultyConstant,
      version: '1.0',
      active: true,
    })),
  );
  if (response.status !== 200) throw new Error(`putCharts: ${response.status} ${response.text}`);
}

/**
 * The ranks by their definition (decisions.md §5), counted over the tables: the reference for
 * answers whose ranks depend on what other tests of the same app uploaded.
 */
async function referenceRanks(
  app: TestApp,
  uid: number,
  levelId: number,
): Promise<{ siteRank: number | null; trackRank: number | null }> {
  const banned = `EXISTS (SELECT 1 FROM player_ban b WHERE b.uid = x.uid AND b.lifted_at IS NULL AND (b.until IS NULL OR b.until > now()))`;
  const [row] = await app.sql<{ site: number | null; track: number | null }>(
    `SELECT (SELECT CASE WHEN me.uid IS NULL THEN NULL ELSE 1 + count(*) END FROM player_rating x
              WHERE (x.atp > me.atp OR (x.atp = me.atp AND x.uid < me.uid)) AND NOT ${banned})::int AS site,
            (SELECT CASE WHEN mine.uid IS NULL THEN NULL ELSE 1 + count(*) END FROM player_chart_best x
              WHERE x.level_id = $2 AND (x.acc > mine.acc OR (x.acc = mine.acc AND (x.first_time_ms < mine.first_time_ms
                 OR (x.first_time_ms = mine.first_time_ms AND x.uid < mine.uid)))) AND NOT ${banned})::int AS track
       FROM (VALUES (1)) one
       LEFT JOIN player_rating me ON me.uid = $1
       LEFT JOIN player_chart_best mine ON mine.uid = $1 AND mine.level_id = $2`,
    [uid, levelId],
  );
  return { siteRank: row.site, trackRank: row.track };
}

describe('POST /player/upload', () => {
  let app: TestApp;
  let server: Awaited<ReturnType<typeof onlineServer>>;

  beforeAll(async () => {
    app = await startTestApp();
    server = await onlineServer(app, { country: 'JP' });
    await putCharts(app, [
      [101, 10],
      [102, 12.5],
    ]);
  });
  afterAll(async () => {
    await app.close();
  });

  describe('a counted play', () => {
    it('answers ATP, ranks, play rating and personal best, and stores the record whole', async () => {
      const player = await onlinePlayer(app, server);
      const payload = gameplay(101, {
        acc: 99.5,
        isRival: true,
        isWin: true,
        rivalUID: 77,
        rivalAcc: 98.25,
        isNewRecord: false,
      });
      const response = await upload(app, server, record(server, player, payload));
      expect(response.status).toBe(200);
      // 10 + 1 + (99.5 − 98)/2 = 11.75; ATP 11.75 / 30 = 0.39166… → 0.3917. The first ranked player of this app.
      expect(response.body).toEqual({ atp: 0.3917, siteRank: 1, trackRank: 1, playRating: 11.75, personalBest: true });

      const [stored] = await app.sql(
        `SELECT r.*, ps.token_hash IS NOT NULL AS via_session, ss.server_id AS session_server
           FROM play_record r JOIN player_session ps ON ps.id = r.player_session_id JOIN server_session ss ON ss.id = r.server_session_id
          WHERE r.uid = $1`,
        [player.uid],
      );
      expect(stored).toEqual({
        id: expect.any(String),
        uid: String(player.uid),
        level_id: 101,
        time_ms: String(payload.time),
        player_timestamp_ms: String(payload.time + 250),
        acc: 99.5,
        pass: true,
        full_combo: false,
        all_perfect: false,
        is_new_record: false,
        max_combo: 355,
        is_rival: true,
        is_win: true,
        rival_uid: '77',
        rival_acc: 98.25,
        tap_perfect: 311,
        tap_great: 4,
        tap_miss: 0,
        hold_perfect: 40,
        hold_great: 2,
        hold_miss: 0,
        dodge_perfect: 12,
        dodge_great: 0,
        dodge_miss: 0,
        look_perfect: 7,
        look_great: 1,
        look_miss: 0,
        player_arena: 'arena:forest',
        server_id: server.serverID,
        server_name: server.body.serverName,
        server_country: 'DE',
        server_session_id: expect.any(String),
        player_session_id: expect.any(String),
        received_at: expect.any(Date),
        flags: [],
        approved_at: null,
        voided_at: null,
        void_reason: null,
        via_session: true,
        session_server: server.serverID,
      });
      // The best was first reached when the service accepted the record (ms), not at payload.time.
      expect(
        await app.sql(
          'SELECT level_id, acc, first_time_ms, record_id, rating, version FROM player_chart_best WHERE uid = $1',
          [player.uid],
        ),
      ).toEqual([
        {
          level_id: 101,
          acc: 99.5,
          first_time_ms: String(Math.floor((stored.received_at as Date).getTime())),
          record_id: stored.id,
          rating: 11.75,
          version: '1',
        },
      ]);
      expect(await app.sql('SELECT atp, version FROM player_rating WHERE uid = $1', [player.uid])).toEqual([
        { atp: '0.3917', version: '1' },
      ]);
    });

    it('decides the personal best itself: a worse play is not one, whatever isNewRecord says, and changes nothing', async () => {
      const player = await onlinePlayer(app, server);
      const first = await upload(app, server, record(server, player, gameplay(102, { acc: 98 })));
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        atp: 0.45,
        personalBest: true,
        playRating: 13.5,
        ...(await referenceRanks(app, player.uid, 102)),
      });

      const worse = await upload(app, server, record(server, player, gameplay(102, { acc: 96.5, isNewRecord: true })));
      expect(worse.status).toBe(200);
      // 12.5 + 1.5/3 = 13
      expect(worse.body).toEqual({
        atp: 0.45,
        personalBest: false,
        playRating: 13,
        ...(await referenceRanks(app, player.uid, 102)),
      });

      const better = await upload(app, server, record(server, player, gameplay(102, { acc: 100, isNewRecord: false })));
      expect(better.status).toBe(200);
      // 14.5 / 30 = 0.48333…
      expect(better.body).toEqual({
        atp: 0.4833,
        personalBest: true,
        playRating: 14.5,
        ...(await referenceRanks(app, player.uid, 102)),
      });
      expect(await app.sql('SELECT count(*)::int AS n FROM play_record WHERE uid = $1', [player.uid])).toEqual([
        { n: 3 },
      ]);
      expect(await app.sql('SELECT acc, rating FROM player_chart_best WHERE uid = $1', [player.uid])).toEqual([
        { acc: 100, rating: 14.5 },
      ]);
    });

    it('stores a pass:false play but does not count it', async () => {
      const player = await onlinePlayer(app, server);
      const failed = await upload(app, server, record(server, player, gameplay(101, { acc: 100, pass: false })));
      expect(failed.status).toBe(200);
      expect(failed.body).toEqual({ atp: 0, siteRank: null, trackRank: null, playRating: 0, personalBest: false });
      expect(await app.sql('SELECT acc, pass FROM play_record WHERE uid = $1', [player.uid])).toEqual([
        { acc: 100, pass: false },
      ]);
      expect(
        await app.sql(
          'SELECT 1 FROM player_chart_best WHERE uid = $1 UNION ALL SELECT 1 FROM player_rating WHERE uid = $1',
          [player.uid],
        ),
      ).toEqual([]);

      const passed = await upload(app, server, record(server, player, gameplay(101, { acc: 95 })));
      expect(passed.body).toEqual({
        atp: 0.3333,
        personalBest: true,
        playRating: 10,
        ...(await referenceRanks(app, player.uid, 101)),
      });
      const failedAgain = await upload(app, server, record(server, player, gameplay(101, { acc: 100, pass: false })));
      expect(failedAgain.body).toEqual({
        atp: 0.3333,
        personalBest: false,
        playRating: 0,
        ...(await referenceRanks(app, player.uid, 101)),
      });
    });

    it('averages the 30 best charts: a 31st lower chart changes nothing, a higher one replaces the lowest', async () => {
      const player = await onlinePlayer(app, server);
      const levels = Array.from({ length: 31 }, (_, i) => 5_000 + i);
      await putCharts(
        app,
        levels.map((level, i) => [level, i === 30 ? 5 : 10] as [number, number]),
      );
      let last: Record<string, unknown> = {};
      for (const level of levels.slice(0, 30))
        last = (await upload(app, server, record(server, player, gameplay(level, { acc: 100 })))).body;
      expect(last.atp).toBe(12);
      const lower = await upload(app, server, record(server, player, gameplay(levels[30], { acc: 100 }))); // rating 7
      expect(lower.body).toEqual({
        atp: 12,
        personalBest: true,
        playRating: 7,
        ...(await referenceRanks(app, player.uid, levels[30])),
      });
      await putCharts(app, [[levels[30], 20]]);
      const higher = await upload(
        app,
        server,
        record(server, player, gameplay(levels[30], { acc: 100, time: nextTime() })),
      ); // same acc, later: not a new best
      expect(higher.body.personalBest).toBe(false);
      expect(higher.body.atp).toBe(12);
      // Recomputing with the new constant: (29 × 12 + 22) / 30 = 12.3333
      expect((await app.admin.post('/admin/ratings/recompute')).status).toBe(200);
      expect(await app.sql('SELECT atp FROM player_rating WHERE uid = $1', [player.uid])).toEqual([{ atp: '12.3333' }]);
    });
  });

  describe('duplicates', () => {
    it('stores the same record once and answers it identically', async () => {
      const player = await onlinePlayer(app, server);
      const body = record(server, player, gameplay(101, { acc: 98.5 }));
      const first = await upload(app, server, body);
      const [written] = await app.sql<{ version: string }>('SELECT version FROM player_rating WHERE uid = $1', [
        player.uid,
      ]);
      const second = await upload(app, server, body);
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(second.body).toEqual(first.body);
      expect(first.body).toEqual({
        atp: 0.375,
        personalBest: true,
        playRating: 11.25,
        ...(await referenceRanks(app, player.uid, 101)),
      });
      expect(await app.sql('SELECT count(*)::int AS n FROM play_record WHERE uid = $1', [player.uid])).toEqual([
        { n: 1 },
      ]);
      // The duplicate wrote nothing: the rating row keeps the first upload's version.
      expect(await app.sql('SELECT version FROM player_rating WHERE uid = $1', [player.uid])).toEqual([written]);
    });

    it('keys a record by player, level and payload.time: a resent record with other figures is still the stored one', async () => {
      const player = await onlinePlayer(app, server);
      const payload = gameplay(101, { acc: 97 });
      const first = await upload(app, server, record(server, player, payload));
      const tampered = await upload(app, server, record(server, player, { ...payload, acc: 100, maxCombo: 1 }));
      expect(tampered.status).toBe(200);
      expect(tampered.body).toEqual(first.body);
      expect(await app.sql('SELECT acc, max_combo FROM play_record WHERE uid = $1', [player.uid])).toEqual([
        { acc: 97, max_combo: 355 },
      ]);
    });

    it('answers a duplicate from the current state when a better play came in between', async () => {
      const player = await onlinePlayer(app, server);
      const old = record(server, player, gameplay(101, { acc: 98 }));
      expect((await upload(app, server, old)).body.personalBest).toBe(true);
      expect((await upload(app, server, record(server, player, gameplay(101, { acc: 100 })))).body.personalBest).toBe(
        true,
      );
      const again = await upload(app, server, old);
      // Its own rating is unchanged (11); ATP and ranks are the player's current ones; it no longer holds the best.
      expect(again.body).toEqual({
        atp: 0.4,
        personalBest: false,
        playRating: 11,
        ...(await referenceRanks(app, player.uid, 101)),
      });
    });

    // Another connection deletes the row while the upload's transaction is open: PostgreSQL only.
    (testDatabaseServerUrl() ? it : it.skip)(
      'stores a resent failed play again when retention purged the stored one between its conflict and its read',
      async () => {
        const player = await onlinePlayer(app, server);
        const body = record(server, player, gameplay(101, { acc: 40, pass: false }));
        const first = await upload(app, server, body);
        expect(first.status).toBe(200);
        const rows = () =>
          app.sql<{ id: string }>('SELECT id::text AS id FROM play_record WHERE uid = $1', [player.uid]);
        const [stored] = await rows();
        const records = app.get(PlayRecordRepository);
        const findRecord = records.findRecord.bind(records);
        // What a purge batch of old failed plays does, between the insert's conflict and the read.
        const spy = jest.spyOn(records, 'findRecord').mockImplementationOnce(async (...args) => {
          await app.sql('DELETE FROM play_record WHERE id = $1', [stored.id]);
          return findRecord(...args);
        });
        try {
          const again = await upload(app, server, body);
          expect({ status: again.status, body: again.body as unknown }).toEqual({ status: 200, body: first.body });
        } finally {
          spy.mockRestore();
        }
        const after = await rows();
        expect(after).toHaveLength(1);
        expect(after[0].id).not.toBe(stored.id);
      },
    );

    it('two concurrent uploads of the same record: one stored, both 200 with the same figures', async () => {
      const player = await onlinePlayer(app, server);
      const body = record(server, player, gameplay(102, { acc: 99 }));
      const [a, b] = await Promise.all([upload(app, server, body), upload(app, server, body)]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(a.body).toEqual(b.body);
      expect(a.body).toEqual({
        atp: 0.4667,
        personalBest: true,
        playRating: 14,
        ...(await referenceRanks(app, player.uid, 102)),
      });
      expect(await app.sql('SELECT count(*)::int AS n FROM play_record WHERE uid = $1', [player.uid])).toEqual([
        { n: 1 },
      ]);
    });

    it('ten concurrent uploads of a first record, five times: one stored each time, every answer the same', async () => {
      for (let round = 0; round < 5; round++) {
        const player = await onlinePlayer(app, server);
        const body = record(server, player, gameplay(101, { acc: 100 }));
        const responses = await Promise.all(Array.from({ length: 10 }, () => upload(app, server, body)));
        expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
        const expected = {
          atp: 0.4,
          personalBest: true,
          playRating: 12,
          ...(await referenceRanks(app, player.uid, 101)),
        };
        expect(responses.map((r) => r.body as unknown)).toEqual(Array(10).fill(expected));
        expect(await app.sql('SELECT count(*)::int AS n FROM play_record WHERE uid = $1', [player.uid])).toEqual([
          { n: 1 },
        ]);
      }
    });

    it('ten concurrent copies of a better record of a ranked player queue on the rating row (no deadlock)', async () => {
      for (let round = 0; round < 3; round++) {
        const player = await onlinePlayer(app, server);
        expect((await upload(app, server, record(server, player, gameplay(102, { acc: 95 })))).status).toBe(200);
        const [before] = await app.sql<{ version: string }>('SELECT version FROM player_rating WHERE uid = $1', [
          player.uid,
        ]);
        const body = record(server, player, gameplay(102, { acc: 99.5 }));
        const responses = await Promise.all(Array.from({ length: 10 }, () => upload(app, server, body)));
        expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
        // 12.5 + 1 + 0.75 = 14.25; 14.25 / 30 = 0.475
        const expected = {
          atp: 0.475,
          personalBest: true,
          playRating: 14.25,
          ...(await referenceRanks(app, player.uid, 102)),
        };
        expect(responses.map((r) => r.body as unknown)).toEqual(Array(10).fill(expected));
        expect(await app.sql('SELECT count(*)::int AS n FROM play_record WHERE uid = $1', [player.uid])).toEqual([
          { n: 2 },
        ]);
        // One write for the ten copies: the next version of the sequence (nothing else writes meanwhile).
        expect(await app.sql('SELECT version FROM player_rating WHERE uid = $1', [player.uid])).toEqual([
          { version: String(Number(before.version) + 1) },
        ]);
      }
    });

    it('concurrent uploads of one player on twelve charts lose no best and no ATP update', async () => {
      const player = await onlinePlayer(app, server);
      const levels = Array.from({ length: 12 }, (_, i) => 6_000 + i);
      await putCharts(
        app,
        levels.map((level) => [level, 10] as [number, number]),
      );
      const [{ last }] = await app.sql<{ last: string }>("SELECT nextval('rank_version_seq')::text AS last");
      const responses = await Promise.all(
        levels.map((level) => upload(app, server, record(server, player, gameplay(level, { acc: 100 })))),
      );
      expect(responses.map((r) => r.status)).toEqual(levels.map(() => 200));
      expect(responses.every((r) => r.body.personalBest === true)).toBe(true);
      // Each answer saw the bests committed before it: the ATPs are 0.4, 0.8, …, 4.8 in some order.
      expect(responses.map((r) => r.body.atp as number).sort((x, y) => x - y)).toEqual(
        levels.map((_, i) => Number((((i + 1) * 12) / 30).toFixed(4))),
      );
      expect(await app.sql('SELECT count(*)::int AS n FROM player_chart_best WHERE uid = $1', [player.uid])).toEqual([
        { n: 12 },
      ]);
      expect(await app.sql('SELECT atp, version FROM player_rating WHERE uid = $1', [player.uid])).toEqual([
        { atp: '4.8000', version: String(Number(last) + 12) },
      ]);
    });
  });

  describe('placeholder charts', () => {
    it('creates the inactive placeholder for an unknown level, stores the play unranked and does not list the chart', async () => {
      const player = await onlinePlayer(app, server);
      const response = await upload(app, server, record(server, player, gameplay(990_001, { acc: 100 })));
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ atp: 0, siteRank: null, trackRank: null, playRating: 0, personalBest: false });
      expect(
        await app.sql(
          'SELECT name, version, difficulty_constant, active, placeholder FROM chart WHERE level_id = 990001',
        ),
      ).toEqual([
        { name: 'Level 990001', version: 'unknown', difficulty_constant: 0, active: false, placeholder: true },
      ]);
      expect(await app.sql('SELECT acc, flags FROM play_record WHERE uid = $1', [player.uid])).toEqual([
        { acc: 100, flags: [] },
      ]);
      expect(
        await app.sql(
          'SELECT 1 FROM player_chart_best WHERE uid = $1 UNION ALL SELECT 1 FROM player_rating WHERE uid = $1',
          [player.uid],
        ),
      ).toEqual([]);
      const charts = await app.http.get('/server/charts', { token: server.accessToken });
      expect(charts.status).toBe(200);
      expect((charts.body as Array<{ levelId: number }>).map((chart) => chart.levelId)).not.toContain(990_001);
    });

    it('creates one placeholder when two players upload the same unknown level at once', async () => {
      const [p1, p2] = [await onlinePlayer(app, server), await onlinePlayer(app, server)];
      const [a, b] = await Promise.all([
        upload(app, server, record(server, p1, gameplay(990_002, { acc: 94 }))),
        upload(app, server, record(server, p2, gameplay(990_002, { acc: 94 }))),
      ]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(a.body.playRating).toBe(0); // max(0, 0 − 1/5)
      expect(await app.sql('SELECT count(*)::int AS n FROM chart WHERE level_id = 990002')).toEqual([{ n: 1 }]);
    });
  });

  describe('one transaction', () => {
    it('leaves nothing stored when a step fails: no record, no placeholder', async () => {
      const player = await onlinePlayer(app, server);
      const catalog = app.get(CatalogService);
      const ensure = catalog.ensurePlaceholderChart.bind(catalog);
      const spy = jest.spyOn(catalog, 'ensurePlaceholderChart').mockImplementationOnce(async (...args) => {
        await ensure(...args);
        throw new Error('disk on fire');
      });
      try {
        const response = await upload(app, server, record(server, player, gameplay(990_003, { acc: 99 })));
        expect(response.status).toBe(500);
        expect(response.body).toEqual({ error: 'INTERNAL_ERROR', message: 'Internal server error' });
      } finally {
        spy.mockRestore();
      }
      expect(await app.sql('SELECT 1 FROM play_record WHERE uid = $1', [player.uid])).toEqual([]);
      expect(await app.sql('SELECT 1 FROM chart WHERE level_id = 990003')).toEqual([]);
      const retried = await upload(app, server, record(server, player, gameplay(990_003, { acc: 99 })));
      expect(retried.status).toBe(200);
      expect(await app.sql('SELECT placeholder FROM chart WHERE level_id = 990003')).toEqual([{ placeholder: true }]);
    });

    it('leaves nothing stored when a step fails: no record, no best, no rating', async () => {
      const player = await onlinePlayer(app, server);
      await putCharts(app, [[7_001, 7.5]]);
      // The best's write fails inside the upload's statement, after the record's insert: a trigger
      // that refuses this player's best (and nobody else's).
      const name = `test_refuse_best_${player.uid}`;
      await app.sql(
        `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN IF NEW.uid = ${player.uid} THEN RAISE EXCEPTION 'disk on fire'; END IF; RETURN NEW; END $$`,
      );
      await app.sql(
        `CREATE TRIGGER ${name} BEFORE INSERT ON player_chart_best FOR EACH ROW EXECUTE FUNCTION ${name}()`,
      );
      try {
        const response = await upload(app, server, record(server, player, gameplay(7_001, { acc: 99 })));
        expect(response.status).toBe(500);
        expect(response.body).toEqual({ error: 'INTERNAL_ERROR', message: 'Internal server error' });
      } finally {
        await app.sql(`DROP TRIGGER ${name} ON player_chart_best`);
        await app.sql(`DROP FUNCTION ${name}()`);
      }
      expect(await app.sql('SELECT 1 FROM play_record WHERE uid = $1', [player.uid])).toEqual([]);
      expect(await app.sql('SELECT 1 FROM player_chart_best WHERE uid = $1', [player.uid])).toEqual([]);
      expect(await app.sql('SELECT 1 FROM player_rating WHERE uid = $1', [player.uid])).toEqual([]);

      // The same record goes through afterwards, with the right ranks (the rank index was rebuilt or never touched).
      const retried = await upload(app, server, record(server, player, gameplay(7_001, { acc: 99 })));
      expect(retried.status).toBe(200);
      // 7.5 + 1 + 0.5 = 9; 9 / 30 = 0.3
      expect(retried.body).toEqual({
        atp: 0.3,
        personalBest: true,
        playRating: 9,
        ...(await referenceRanks(app, player.uid, 7_001)),
      });
    });

    it('the transactional path leaves nothing stored when its best write fails, and the next upload ranks right', async () => {
      const player = await onlinePlayer(app, server);
      await putCharts(app, [[7_002, 7.5]]);
      // The one statement answers as for a chart it has no row of (it wrote nothing), so the upload runs as a transaction.
      const records = app.get(PlayRecordRepository);
      const oneStatement = jest.spyOn(records, 'uploadInOneStatement').mockResolvedValueOnce({ outcome: 'chart' });
      const bestWrite = jest
        .spyOn(app.get(RatingRepository), 'writeBestAndRating')
        .mockRejectedValueOnce(new Error('disk on fire'));
      try {
        const response = await upload(app, server, record(server, player, gameplay(7_002, { acc: 99 })));
        expect(response.status).toBe(500);
        expect(response.body).toEqual({ error: 'INTERNAL_ERROR', message: 'Internal server error' });
        expect(bestWrite).toHaveBeenCalledTimes(1);
      } finally {
        oneStatement.mockRestore();
        bestWrite.mockRestore();
      }
      expect(await app.sql('SELECT 1 FROM play_record WHERE uid = $1', [player.uid])).toEqual([]);
      expect(await app.sql('SELECT 1 FROM player_chart_best WHERE uid = $1', [player.uid])).toEqual([]);
      expect(await app.sql('SELECT 1 FROM player_rating WHERE uid = $1', [player.uid])).toEqual([]);

      const retried = await upload(app, server, record(server, player, gameplay(7_002, { acc: 99 })));
      expect(retried.status).toBe(200);
      expect(retried.body).toEqual({
        atp: 0.3,
        personalBest: true,
        playRating: 9,
        ...(await referenceRanks(app, player.uid, 7_002)),
      });
    });
  });

  describe('counters at the top of their range', () => {
    it('stores a play whose judged notes add up past 2^31 − 1 (each counter in range), flagged by the note count', async () => {
      const player = await onlinePlayer(app, server);
      await app.admin.put('/admin/charts', [
        { levelId: 7_010, name: 'Chart 7010', difficultyConstant: 10, version: '1.0', active: true, notes: 1_000 },
      ]);
      const payload = gameplay(7_010, {
        acc: 100,
        maxCombo: 10,
        tapStats: { perfect: 2_147_483_647, great: 0, miss: 0 },
        holdStats: { perfect: 1, great: 0, miss: 0 },
      });
      const response = await upload(app, server, record(server, player, payload));
      expect(response.status).toBe(200);
      // The note count (2^31 judged against the chart's 1,000) flags it: stored, not counted.
      expect(response.body).toEqual({ atp: 0, siteRank: null, trackRank: null, playRating: 0, personalBest: false });
      expect(
        await app.sql('SELECT tap_perfect, hold_perfect, flags FROM play_record WHERE uid = $1', [player.uid]),
      ).toEqual([{ tap_perfect: 2_147_483_647, hold_perfect: 1, flags: ['noteCount'] }]);
    });
  });

  describe('validation (400 naming the field)', () => {
    let player: TestPlayerSession;
    beforeAll(async () => {
      player = await onlinePlayer(app, server);
    });

    const valid = () => record(server, player, gameplay(101));
    type Body = ReturnType<typeof valid>;

    it.each<[string, (body: Body) => unknown, string]>([
      ['no player', (b) => ({ ...b, player: undefined }), 'player must be an object'],
      ['player not an object', (b) => ({ ...b, player: 'me' }), 'player must be an object'],
      [
        'playerUID missing',
        (b) => ({ ...b, player: { ...b.player, playerUID: undefined } }),
        'player.playerUID must be a positive integer',
      ],
      [
        'playerUID negative',
        (b) => ({ ...b, player: { ...b.player, playerUID: -4 } }),
        'player.playerUID must be a positive integer',
      ],
      [
        'accessToken empty',
        (b) => ({ ...b, player: { ...b.player, accessToken: '' } }),
        'player.accessToken should not be empty',
      ],
      [
        'timestamp a string',
        (b) => ({ ...b, player: { ...b.player, timestamp: '1700000000000' } }),
        'player.timestamp must be an integer of epoch milliseconds from 1 to 253402300799999',
      ],
      [
        'timestamp fractional',
        (b) => ({ ...b, player: { ...b.player, timestamp: 1.5 } }),
        'player.timestamp must be an integer of epoch milliseconds from 1 to 253402300799999',
      ],
      [
        'timestamp 0',
        (b) => ({ ...b, player: { ...b.player, timestamp: 0 } }),
        'player.timestamp must be an integer of epoch milliseconds from 1 to 253402300799999',
      ],
      [
        'serverID missing',
        (b) => ({ ...b, server: { ...b.server, serverID: undefined } }),
        'server.serverID must be an integer from 1 to 2147483647',
      ],
      [
        'serverName a number',
        (b) => ({ ...b, server: { ...b.server, serverName: 5 } }),
        'server.serverName must be shorter than or equal to 64 characters; server.serverName must be a string',
      ],
      [
        'country missing',
        (b) => ({ ...b, server: { serverID: b.server.serverID, serverName: 'x' } }),
        'server.country must be shorter than or equal to 64 characters; server.country must be a string',
      ],
      [
        'type other than gameplay',
        (b) => ({ ...b, payload: { ...b.payload, type: 'replay' } }),
        "payload.type must be 'gameplay'",
      ],
      [
        'levelID negative',
        (b) => ({ ...b, payload: { ...b.payload, levelID: -1 } }),
        'payload.levelID must be an integer from 0 to 2147483647',
      ],
      [
        'levelID beyond int32',
        (b) => ({ ...b, payload: { ...b.payload, levelID: 2_147_483_648 } }),
        'payload.levelID must be an integer from 0 to 2147483647',
      ],
      [
        'acc above 100',
        (b) => ({ ...b, payload: { ...b.payload, acc: 100.01 } }),
        'payload.acc must be a number from 0 to 100',
      ],
      [
        'acc negative',
        (b) => ({ ...b, payload: { ...b.payload, acc: -1 } }),
        'payload.acc must be a number from 0 to 100',
      ],
      [
        'acc a string',
        (b) => ({ ...b, payload: { ...b.payload, acc: '99' } }),
        'payload.acc must be a number from 0 to 100',
      ],
      [
        'isRival a string',
        (b) => ({ ...b, payload: { ...b.payload, isRival: 'no' } }),
        'payload.isRival must be a boolean value',
      ],
      [
        'rivalAcc above 100',
        (b) => ({ ...b, payload: { ...b.payload, rivalAcc: 101 } }),
        'payload.rivalAcc must be a number from 0 to 100',
      ],
      [
        'a counter negative',
        (b) => ({ ...b, payload: { ...b.payload, tapStats: { perfect: -1, great: 0, miss: 0 } } }),
        'payload.tapStats.perfect must be an integer from 0 to 2147483647',
      ],
      [
        'a counter fractional',
        (b) => ({ ...b, payload: { ...b.payload, holdStats: { perfect: 1, great: 0.5, miss: 0 } } }),
        'payload.holdStats.great must be an integer from 0 to 2147483647',
      ],
      [
        'a counter missing',
        (b) => ({ ...b, payload: { ...b.payload, dodgeStats: { perfect: 1, great: 0 } } }),
        'payload.dodgeStats.miss must be an integer from 0 to 2147483647',
      ],
      [
        'stats not an object',
        (b) => ({ ...b, payload: { ...b.payload, lookStats: [1, 2, 3] } }),
        'payload.lookStats must be an object',
      ],
      [
        'maxCombo negative',
        (b) => ({ ...b, payload: { ...b.payload, maxCombo: -3 } }),
        'payload.maxCombo must be an integer from 0 to 2147483647',
      ],
      [
        'pass missing',
        (b) => ({ ...b, payload: { ...b.payload, pass: undefined } }),
        'payload.pass must be a boolean value',
      ],
      [
        'fullCombo a number',
        (b) => ({ ...b, payload: { ...b.payload, fullCombo: 1 } }),
        'payload.fullCombo must be a boolean value',
      ],
      [
        'player_arena too long',
        (b) => ({ ...b, payload: { ...b.payload, player_arena: 'x'.repeat(65) } }),
        'payload.player_arena must be shorter than or equal to 64 characters',
      ],
      [
        'time fractional',
        (b) => ({ ...b, payload: { ...b.payload, time: 1_772_000_000_000.5 } }),
        'payload.time must be an integer of epoch milliseconds from 1 to 253402300799999',
      ],
      [
        'time beyond year 9999',
        (b) => ({ ...b, payload: { ...b.payload, time: 253_402_300_800_000 } }),
        'payload.time must be an integer of epoch milliseconds from 1 to 253402300799999',
      ],
    ])('%s', async (_label, mutate, message) => {
      const response = await upload(app, server, mutate(valid()));
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badLines(...message.split('; ')));
      expect(await app.sql('SELECT 1 FROM play_record WHERE uid = $1', [player.uid])).toEqual([]);
    });

    it('answers an array body with 400', async () => {
      const response = await upload(app, server, [valid()]);
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badRequest('The request body must be a JSON object'));
    });

    it("answers 400 when server.serverID is not the calling session's server", async () => {
      const other = await onlineServer(app);
      const body = valid();
      const response = await upload(app, server, { ...body, server: { ...body.server, serverID: other.serverID } });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(
        badField('server.serverID', `${other.serverID} is not the server of this session`, 'label'),
      );
      expect(await app.sql('SELECT 1 FROM play_record WHERE uid = $1', [player.uid])).toEqual([]);
    });
  });

  describe('authentication (401)', () => {
    it('needs a live server access token', async () => {
      const player = await onlinePlayer(app, server);
      const body = record(server, player, gameplay(101));
      for (const token of [null, 'not-a-token', server.server.bootstrapToken]) {
        const response = await app.http.post('/player/upload', body, { token });
        expect(response.status).toBe(401);
        expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: expect.any(String) });
      }
      expect(await app.sql('SELECT 1 FROM play_record WHERE uid = $1', [player.uid])).toEqual([]);
    });

    it('answers 401 for an unknown player token', async () => {
      const player = await onlinePlayer(app, server);
      // An unknown level: a refused upload must not create its placeholder chart either.
      const response = await upload(
        app,
        server,
        record(server, { uid: player.uid, accessToken: 'forged' }, gameplay(424242)),
      );
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid or expired player access token' });
      expect(await app.sql('SELECT 1 FROM play_record WHERE uid = $1', [player.uid])).toEqual([]);
      expect(await app.sql('SELECT 1 FROM chart WHERE level_id = 424242')).toEqual([]);
      expect(await app.sql('SELECT 1 FROM player_rating WHERE uid = $1', [player.uid])).toEqual([]);
    });

    it('answers 401 when playerUID does not own the token', async () => {
      const [player, other] = [await onlinePlayer(app, server), await onlinePlayer(app, server)];
      const response = await upload(
        app,
        server,
        record(server, { uid: other.uid, accessToken: player.accessToken }, gameplay(101)),
      );
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'The access token does not belong to this uid' });
      expect(await app.sql('SELECT 1 FROM play_record WHERE uid = ANY($1)', [[player.uid, other.uid]])).toEqual([]);
    });

    it('answers 401 for a live token of another server session, and for a logged-out session', async () => {
      const elsewhere = await onlineServer(app);
      const player = await onlinePlayer(app, elsewhere);
      const foreign = await upload(app, server, record(server, player, gameplay(101)));
      expect(foreign.status).toBe(401);
      expect(foreign.body).toEqual({
        error: 'UNAUTHORIZED',
        message: 'The player session belongs to another server session',
      });
      expect(await app.sql('SELECT 1 FROM play_record WHERE uid = $1', [player.uid])).toEqual([]);

      expect(
        (
          await app.http.post(
            '/player/logout',
            { uid: player.uid, accessToken: player.accessToken },
            { token: elsewhere.accessToken },
          )
        ).status,
      ).toBe(204);
      const loggedOut = await upload(app, elsewhere, record(elsewhere, player, gameplay(101)));
      expect(loggedOut.status).toBe(401);
      expect(loggedOut.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid or expired player access token' });
      expect(await app.sql('SELECT 1 FROM play_record WHERE uid = $1', [player.uid])).toEqual([]);
    });
  });
});

describe('Upload with an expired player token', () => {
  let app: TestApp;
  let server: Awaited<ReturnType<typeof onlineServer>>;

  beforeAll(async () => {
    app = await startTestApp({ env: { PLAYER_TOKEN_TTL_SECONDS: '1' } });
    server = await onlineServer(app);
    await putCharts(app, [[101, 10]]);
  });
  afterAll(async () => {
    await app.close();
  });

  const expire = () => sleep(1_100);

  it("is accepted under the player's online session on the same server session", async () => {
    const player = await onlinePlayer(app, server);
    await expire();
    // The token really is expired: other player calls refuse it.
    expect(
      (
        await app.http.post(
          '/player/options',
          { uid: player.uid, accessToken: player.accessToken, options: {} },
          { token: server.accessToken },
        )
      ).status,
    ).toBe(401);
    const response = await upload(app, server, record(server, player, gameplay(101, { acc: 100 })));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ atp: 0.4, siteRank: 1, trackRank: 1, playRating: 12, personalBest: true });
    const [session] = await app.sql<{ id: string }>(
      'SELECT id FROM player_session WHERE uid = $1 AND logged_out_at IS NULL',
      [player.uid],
    );
    expect(await app.sql('SELECT player_session_id FROM play_record WHERE uid = $1', [player.uid])).toEqual([
      { player_session_id: session.id },
    ]);
  });

  it('is refused under another server session', async () => {
    const player = await onlinePlayer(app, server);
    const other = await onlineServer(app);
    await expire();
    const response = await upload(app, other, record(other, player, gameplay(101)));
    expect(response.status).toBe(401);
    expect(response.body).toEqual({
      error: 'UNAUTHORIZED',
      message: 'The player access token has expired and the player has no online session under this server session',
    });
  });

  it('is refused once the session is over (its server session was replaced), and for another uid', async () => {
    const srv = await onlineServer(app);
    const player = await onlinePlayer(app, srv);
    const stranger = await onlinePlayer(app, srv);
    await expire();
    const foreignUid = await upload(
      app,
      srv,
      record(srv, { uid: stranger.uid, accessToken: player.accessToken }, gameplay(101)),
    );
    expect(foreignUid.status).toBe(401);
    expect(foreignUid.body).toEqual({ error: 'UNAUTHORIZED', message: 'The access token does not belong to this uid' });

    const relogged = await loginServer(app, srv.server); // ends the old server session and logs its players out
    const response = await upload(app, relogged, record(relogged, player, gameplay(101)));
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid or expired player access token' });
    expect(await app.sql('SELECT 1 FROM play_record WHERE uid = ANY($1)', [[player.uid, stranger.uid]])).toEqual([]);
  });

  it('is refused after a new login of the player closed the expired session', async () => {
    const created = await createPlayer(app);
    const first = await loginPlayer(app, server, created);
    await expire();
    await loginPlayer(app, server, created); // closes the expired session (logout_reason = expired)
    const response = await upload(app, server, record(server, first, gameplay(101)));
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid or expired player access token' });
  });
});

describe('Upload with an expired player token of a stale session', () => {
  let app: TestApp;
  let server: Awaited<ReturnType<typeof onlineServer>>;

  beforeAll(async () => {
    // Tokens live 1 s; a renewal counts for two resync intervals: 2 s.
    app = await startTestApp({ env: { PLAYER_TOKEN_TTL_SECONDS: '1', PLAYER_RESYNC_INTERVAL_SECONDS: '1' } });
    server = await onlineServer(app);
    await putCharts(app, [[101, 10]]);
  });
  afterAll(async () => {
    await app.close();
  });

  it('is accepted within two resync intervals of the last renewal, refused (401, nothing stored) after', async () => {
    const player = await onlinePlayer(app, server);
    await sleep(1_100);
    const accepted = gameplay(101);
    expect((await upload(app, server, record(server, player, accepted))).status).toBe(200);
    await sleep(1_100);
    const stale = await upload(app, server, record(server, player, gameplay(101)));
    expect(stale.status).toBe(401);
    expect(stale.body).toEqual({
      error: 'UNAUTHORIZED',
      message: 'The player access token has expired and the player session was not renewed within two resync intervals',
    });
    expect(await app.sql('SELECT time_ms::text AS t FROM play_record WHERE uid = $1', [player.uid])).toEqual([
      { t: String(accepted.time) },
    ]);
  });
});

describe('Upload after an options sync renewed a stale session', () => {
  let app: TestApp;
  let server: Awaited<ReturnType<typeof onlineServer>>;

  beforeAll(async () => {
    // Tokens live 2 s (a sync at 0.9 s has 1.1 s of margin on a loaded machine); a renewal counts
    // for two resync intervals: 2 s.
    app = await startTestApp({ env: { PLAYER_TOKEN_TTL_SECONDS: '2', PLAYER_RESYNC_INTERVAL_SECONDS: '1' } });
    server = await onlineServer(app);
    await putCharts(app, [[101, 10]]);
  });
  afterAll(async () => {
    await app.close();
  });

  it('counts an options sync as a renewal', async () => {
    const player = await onlinePlayer(app, server);
    await sleep(900);
    expect(
      (
        await app.http.post(
          '/player/options',
          { uid: player.uid, accessToken: player.accessToken, options: {} },
          { token: server.accessToken },
        )
      ).status,
    ).toBe(200);
    await sleep(1_500);
    // At least 2.4 s after the login, so the token has expired and the login alone no longer
    // renews (2 s); 1.5 s after the sync, which does (0.5 s of margin for a slow machine).
    expect((await upload(app, server, record(server, player, gameplay(101)))).status).toBe(200);
  });
});

describe('Upload ranks', () => {
  let app: TestApp;
  let server: Awaited<ReturnType<typeof onlineServer>>;
  let players: TestPlayerSession[];
  const T = Date.now() - 3_600_000;

  const play = (i: number, levelID: number, overrides: Record<string, unknown>) =>
    upload(app, server, record(server, players[i], gameplay(levelID, overrides))).then((response) => {
      if (response.status !== 200) throw new Error(`upload: ${response.status} ${response.text}`);
      return response.body as Record<string, unknown>;
    });
  /** A play that changes nothing (pass: false): its answer shows the player's current ranks. */
  const look = (i: number, levelID: number) => play(i, levelID, { pass: false, acc: 50 });

  beforeAll(async () => {
    app = await startTestApp();
    server = await onlineServer(app);
    await putCharts(app, [
      [201, 10],
      [202, 10],
    ]);
    players = [];
    for (let i = 0; i < 5; i++) players.push(await onlinePlayer(app, server)); // uids ascending
  });
  afterAll(async () => {
    await app.close();
  });

  it('orders the site by ATP desc then uid asc, and a chart by acc desc, then first reached (on the service clock) asc, then uid asc', async () => {
    // P0: 100 %.
    expect(await play(0, 201, { acc: 100, time: T + 1_000 })).toEqual({
      atp: 0.4,
      siteRank: 1,
      trackRank: 1,
      playRating: 12,
      personalBest: true,
    });
    // P1: 100 % with an earlier payload.time, accepted later: second on the chart; same ATP as P0 and a higher uid: second on the site.
    expect(await play(1, 201, { acc: 100, time: T + 900 })).toEqual({
      atp: 0.4,
      siteRank: 2,
      trackRank: 2,
      playRating: 12,
      personalBest: true,
    });
    // P2: 100 % accepted after both: third on both.
    expect(await play(2, 201, { acc: 100, time: T + 900 })).toEqual({
      atp: 0.4,
      siteRank: 3,
      trackRank: 3,
      playRating: 12,
      personalBest: true,
    });
    expect(await look(0, 201)).toMatchObject({ siteRank: 1, trackRank: 1 });
    // P0 sends an older 100 % play late: payload.time decides nothing, the best stays the one accepted first.
    expect(await play(0, 201, { acc: 100, time: T + 800 })).toEqual({
      atp: 0.4,
      siteRank: 1,
      trackRank: 1,
      playRating: 12,
      personalBest: false,
    });
    expect(await look(1, 201)).toMatchObject({ siteRank: 2, trackRank: 2 });
    expect(await look(2, 201)).toMatchObject({ siteRank: 3, trackRank: 3 });
    // P1 cannot win the tie with a modified plugin sending time: 1 either: the record is flagged (time check) and changes nothing.
    expect(await play(1, 201, { acc: 100, time: 1 })).toEqual({
      atp: 0.4,
      siteRank: 2,
      trackRank: 2,
      playRating: 0,
      personalBest: false,
    });
    const [best] = await app.sql<{ first_time_ms: string; received_ms: string }>(
      `SELECT b.first_time_ms::text, floor(extract(epoch FROM r.received_at) * 1000)::text AS received_ms
         FROM player_chart_best b JOIN play_record r ON r.id = b.record_id WHERE b.uid = $1 AND b.level_id = 201`,
      [players[0].uid],
    );
    expect(best.first_time_ms).toBe(best.received_ms);
    // P3: 95 % on 202 (ATP 10/30 = 0.3333): fourth on the site, first on 202; no best on 201.
    expect(await play(3, 202, { acc: 95, time: T })).toEqual({
      atp: 0.3333,
      siteRank: 4,
      trackRank: 1,
      playRating: 10,
      personalBest: true,
    });
    expect(await look(3, 201)).toEqual({
      atp: 0.3333,
      siteRank: 4,
      trackRank: null,
      playRating: 0,
      personalBest: false,
    });
    // P3 then 99 % on 201 (11.5): ATP 21.5/30 = 0.7167, first on the site, fourth on 201.
    expect(await play(3, 201, { acc: 99, time: T })).toEqual({
      atp: 0.7167,
      siteRank: 1,
      trackRank: 4,
      playRating: 11.5,
      personalBest: true,
    });
    expect(await look(0, 201)).toMatchObject({ siteRank: 2, trackRank: 1 });
    // P4 never passed anything: no ranks at all.
    expect(await look(4, 201)).toEqual({ atp: 0, siteRank: null, trackRank: null, playRating: 0, personalBest: false });
  });

  it('leaves a banned player out of both orders at once and takes them back when the ban is lifted', async () => {
    expect(await look(0, 201)).toMatchObject({ siteRank: 2, trackRank: 1 });
    expect(await look(1, 201)).toMatchObject({ siteRank: 3, trackRank: 2 });
    // Ban P3 (site #1, track #4 on 201) and P0 (site #2, track #1).
    expect((await app.admin.post(`/admin/players/${players[3].uid}/ban`, { reason: 'cheating' })).status).toBe(200);
    expect(await look(0, 201)).toMatchObject({ siteRank: 1, trackRank: 1 });
    expect((await app.admin.post(`/admin/players/${players[0].uid}/ban`, {})).status).toBe(200);
    expect(await look(1, 201)).toEqual({ atp: 0.4, siteRank: 1, trackRank: 1, playRating: 0, personalBest: false });
    expect(await look(2, 201)).toEqual({ atp: 0.4, siteRank: 2, trackRank: 2, playRating: 0, personalBest: false });
    // A banned player cannot upload (the ban logged the session out); the records are kept.
    const refused = await upload(app, server, record(server, players[0], gameplay(201)));
    expect(refused.status).toBe(401);
    expect(await app.sql('SELECT count(*)::int AS n FROM player_chart_best WHERE uid = $1', [players[0].uid])).toEqual([
      { n: 1 },
    ]);

    expect((await app.admin.delete(`/admin/players/${players[3].uid}/ban`)).status).toBe(204);
    expect(await look(1, 201)).toEqual({ atp: 0.4, siteRank: 2, trackRank: 1, playRating: 0, personalBest: false });
    expect((await app.admin.delete(`/admin/players/${players[0].uid}/ban`)).status).toBe(204);
    expect(await look(1, 201)).toEqual({ atp: 0.4, siteRank: 3, trackRank: 2, playRating: 0, personalBest: false });
    // Both log in again (the bans ended their sessions).
    players[0] = await loginPlayer(app, server, players[0]);
    players[3] = await loginPlayer(app, server, players[3]);
  });

  it('takes a player back when a ban runs out, with no event', async () => {
    const until = formatLocalDateTime(new Date(Date.now() + 2_000));
    expect((await app.admin.post(`/admin/players/${players[3].uid}/ban`, { until })).status).toBe(200);
    expect(await look(0, 201)).toMatchObject({ siteRank: 1, trackRank: 1 });
    await sleep(Math.max(0, new Date(until.replace('T', ' ')).getTime() + 1_100 - Date.now()));
    expect(await look(0, 201)).toMatchObject({ siteRank: 2, trackRank: 1 });
    players[3] = await loginPlayer(app, server, players[3]);
  });

  it('recomputes ratings from the stored records after a constant changes', async () => {
    // P3: 202 at 95 % (10) + 201 at 99 % (11.5) = 0.7167. P0, P1, P2: 0.4.
    await putCharts(app, [[201, 5]]); // 201 drops: 100 % → 7, 99 % → 6.5
    expect(await look(0, 201)).toMatchObject({ atp: 0.4, siteRank: 2 }); // nothing recomputed yet
    const response = await app.admin.post('/admin/ratings/recompute');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ players: 5, bests: 5, atpChanged: 4, batches: 1 });
    expect(await app.sql('SELECT uid::int, atp FROM player_rating ORDER BY uid')).toEqual([
      { uid: players[0].uid, atp: '0.2333' },
      { uid: players[1].uid, atp: '0.2333' },
      { uid: players[2].uid, atp: '0.2333' },
      { uid: players[3].uid, atp: '0.5500' },
    ]);
    expect(
      await app.sql('SELECT rating FROM player_chart_best WHERE uid = $1 AND level_id = 201', [players[0].uid]),
    ).toEqual([{ rating: 7 }]);
    expect(await look(0, 201)).toEqual({ atp: 0.2333, siteRank: 2, trackRank: 1, playRating: 0, personalBest: false });
    // 201 at 10.5: P0..P2 get 12.5 (0.4167), P3 gets 10 + 12 = 22 (0.7333). PostgreSQL cancels the
    // batch once to break a deadlock (its rating-row locks against a batch of uploads): it runs again.
    await putCharts(app, [[201, 10.5]]);
    const ratings = app.get(RatingRepository);
    const lockRatings = ratings.lockRatings.bind(ratings);
    const deadlocked = jest.spyOn(ratings, 'lockRatings').mockImplementationOnce(async (uids, manager) => {
      await lockRatings(uids, manager);
      throw new QueryFailedError(
        'SELECT … FOR UPDATE',
        [],
        Object.assign(new Error('deadlock detected'), { code: '40P01' }),
      );
    });
    try {
      expect((await app.admin.post('/admin/ratings/recompute')).body).toEqual({
        players: 5,
        bests: 5,
        atpChanged: 4,
        batches: 1,
      });
      expect(deadlocked).toHaveBeenCalledTimes(2);
    } finally {
      deadlocked.mockRestore();
    }
    expect(await look(3, 202)).toEqual({ atp: 0.7333, siteRank: 1, trackRank: 1, playRating: 0, personalBest: false });
    expect(await look(2, 201)).toEqual({ atp: 0.4167, siteRank: 4, trackRank: 3, playRating: 0, personalBest: false });
    // A second recompute with nothing changed changes nothing.
    expect((await app.admin.post('/admin/ratings/recompute')).body).toEqual({
      players: 5,
      bests: 5,
      atpChanged: 0,
      batches: 1,
    });
  });

  it("keeps the banned correction exact when a recompute changes a banned player's rating", async () => {
    // P3 (0.7333) leads the site. Banned, then 202 (P3's 95 %) drops to 0, then a recompute: P3's
    // ATP falls below P0..P2 while banned. Lifted, P3 must come back at its new place.
    expect((await app.admin.post(`/admin/players/${players[3].uid}/ban`, {})).status).toBe(200);
    expect(await look(0, 201)).toMatchObject({ siteRank: 1 });
    await putCharts(app, [[202, 0]]);
    expect((await app.admin.post('/admin/ratings/recompute')).body).toEqual({
      players: 5,
      bests: 5,
      atpChanged: 1,
      batches: 1,
    });
    expect(await look(0, 201)).toEqual({
      atp: 0.4167,
      ...(await referenceRanks(app, players[0].uid, 201)),
      playRating: 0,
      personalBest: false,
    });
    expect(await look(0, 201)).toMatchObject({ siteRank: 1, trackRank: 1 });
    expect((await app.admin.delete(`/admin/players/${players[3].uid}/ban`)).status).toBe(204);
    // P3: 12 (99 % on 201 at 10.5) + 0 (95 % on 202 at 0) = 0.4; behind the three 0.4167.
    expect(await look(0, 201)).toMatchObject({ siteRank: 1, trackRank: 1 });
    expect(await look(2, 201)).toEqual({ atp: 0.4167, siteRank: 3, trackRank: 3, playRating: 0, personalBest: false });
    players[3] = await loginPlayer(app, server, players[3]);
    expect(await look(3, 201)).toEqual({ atp: 0.4, siteRank: 4, trackRank: 4, playRating: 0, personalBest: false });
  });

  it('needs the admin token for the recompute', async () => {
    const response = await app.http.post('/admin/ratings/recompute', undefined, { token: server.accessToken });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid admin token' });
  });
});

describe('Upload ranks with and without Redis', () => {
  /** A deterministic scenario with many ties: the answers must be the same in every mode. */
  async function scenario(app: TestApp): Promise<unknown[]> {
    const server = await onlineServer(app);
    await putCharts(app, [
      [301, 10],
      [302, 11],
      [303, 0.5],
    ]);
    const players: TestPlayerSession[] = [];
    for (let i = 0; i < 8; i++) players.push(await onlinePlayer(app, server));
    const accs = [100, 100, 99.5, 98, 95, 90, 100, 99.5];
    let seed = 17;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    const answers: unknown[] = [];
    const mismatches: string[] = [];
    const base = Date.now() - 3_600_000;
    for (let step = 0; step < 60; step++) {
      const who = Math.floor(next() * players.length);
      const level = 301 + Math.floor(next() * 3);
      const payload = gameplay(level, {
        acc: accs[Math.floor(next() * accs.length)],
        pass: next() > 0.15,
        time: base + Math.floor(next() * 6) * 1_000,
      });
      if (step === 30) await app.admin.post(`/admin/players/${players[2].uid}/ban`, {}); // logs P2 out: its uploads are 401 until step 45
      if (step === 45) {
        await app.admin.delete(`/admin/players/${players[2].uid}/ban`);
        players[2] = await loginPlayer(app, server, players[2]);
      }
      const response = await upload(app, server, record(server, players[who], payload));
      answers.push([response.status, response.body]);
      if (response.status === 200) {
        const expected = await referenceRanks(app, players[who].uid, level);
        const body = response.body as { siteRank: number | null; trackRank: number | null };
        if (body.siteRank !== expected.siteRank || body.trackRank !== expected.trackRank) {
          mismatches.push(`step ${step}: ${JSON.stringify(body)} vs ${JSON.stringify(expected)}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
    return answers;
  }

  it('answers the same figures with the in-process index and with Redis (when REDIS_URL is set), matching SQL', async () => {
    const memoryApp = await startTestApp({ redis: false });
    let memory: unknown[];
    try {
      expect(rankIndexOf(memoryApp).kind).toBe('memory');
      memory = await scenario(memoryApp);
    } finally {
      await memoryApp.close();
    }
    const defaultApp = await startTestApp();
    try {
      expect(rankIndexOf(defaultApp).kind).toBe(testRedisUrl() ? 'redis' : 'memory');
      expect(await scenario(defaultApp)).toEqual(memory);
    } finally {
      await defaultApp.close();
    }
    expect(memory.filter((answer) => (answer as [number])[0] === 401)).not.toHaveLength(0); // the banned player's tries
  });

  it('answers from SQL with the same figures while the index cannot answer', async () => {
    const app = await startTestApp();
    try {
      const server = await onlineServer(app);
      await putCharts(app, [[301, 10]]);
      const a = await onlinePlayer(app, server);
      const b = await onlinePlayer(app, server);
      await upload(app, server, record(server, a, gameplay(301, { acc: 99 })));
      const index = rankIndexOf(app);
      const positions = jest.spyOn(index, 'positions').mockResolvedValue(null);
      try {
        const response = await upload(app, server, record(server, b, gameplay(301, { acc: 98 })));
        expect(response.body).toEqual({ atp: 0.3667, siteRank: 2, trackRank: 2, playRating: 11, personalBest: true });
      } finally {
        positions.mockRestore();
      }
      expect((await upload(app, server, record(server, b, gameplay(301, { acc: 10, pass: false })))).body).toEqual({
        atp: 0.3667,
        siteRank: 2,
        trackRank: 2,
        playRating: 0,
        personalBest: false,
      });
    } finally {
      await app.close();
    }
  });

  it("counts two ranks in SQL at once while the index cannot answer, one per game server: the same server's next waits for its own, 3 s, then 503 with the play stored, answered when sent again", async () => {
    const app = await startTestApp();
    try {
      const server = await onlineServer(app);
      const other = await onlineServer(app);
      await putCharts(app, [[301, 10]]);
      const a = await onlinePlayer(app, server);
      const b = await onlinePlayer(app, server);
      const c = await onlinePlayer(app, other);
      await upload(app, server, record(server, a, gameplay(301, { acc: 99 })));
      const counts = holdSqlCounts(app);
      try {
        const first = upload(app, server, record(server, b, gameplay(301, { acc: 98 })));
        while (counts.held() < 1) await sleep(10);
        // The same server's next upload is stored, then waits for its server's count: a slot is free, not its turn.
        const second = record(server, b, gameplay(301, { acc: 99.5 }));
        const started = Date.now();
        const refusing = upload(app, server, second);
        await eventually(
          async () =>
            (
              await app.sql('SELECT 1 FROM play_record WHERE uid = $1 AND level_id = 301 AND time_ms = $2', [
                b.uid,
                second.payload.time,
              ])
            ).length === 1,
          'the second upload is stored',
        );
        await sleep(200);
        expect(counts.held()).toBe(1);
        // Another server's upload takes the free slot at once.
        const third = upload(app, other, record(other, c, gameplay(301, { acc: 97 })));
        while (counts.held() < 2) await sleep(10);
        const refused = await refusing;
        expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
        expect(refused.status).toBe(503);
        expect(refused.headers.get('retry-after')).toBe('5');
        expect(refused.body).toEqual({
          error: 'UNAVAILABLE',
          message:
            'Ranks are counted in the database while the rank index is rebuilt, and this instance is counting ' +
            'as many as the database can take; retry later (an upload is stored already: sent again once the index is back, it is answered)',
        });
        // Stored, and counted: b's best is now the refused play.
        const stored = await app.sql<{ acc: number }>(
          'SELECT acc FROM play_record WHERE uid = $1 AND level_id = 301 AND time_ms = $2',
          [b.uid, second.payload.time],
        );
        expect(stored).toEqual([{ acc: 99.5 }]);
        counts.release();
        expect((await first).body).toEqual({
          atp: 0.3667,
          siteRank: 2,
          trackRank: 2,
          playRating: 11,
          personalBest: true,
        });
        const thirdAnswer = await third;
        expect({ status: thirdAnswer.status, ...thirdAnswer.body }).toMatchObject({
          status: 200,
          siteRank: 3,
          trackRank: 3,
        });
        const again = await upload(app, server, second);
        expect(again.status).toBe(200);
        expect(again.body).toEqual({ atp: 0.3917, siteRank: 1, trackRank: 1, playRating: 11.75, personalBest: true });
        const records = await app.sql<{ n: number }>(
          'SELECT count(*)::int AS n FROM play_record WHERE uid = $1 AND level_id = 301',
          [b.uid],
        );
        expect(records).toEqual([{ n: 2 }]);
        const metrics = (await app.http.get('/metrics', { token: null })).text;
        expect(metrics).toContain('rhythmc_rank_sql_counts_total{result="counted"} 3\n');
        expect(metrics).toContain('rhythmc_rank_sql_counts_total{result="refused"} 1\n');
      } finally {
        counts.restore();
      }
    } finally {
      await app.close();
    }
  });

  it('counts the ranks of profiles one at a time per caller while the index cannot answer: two staff profiles at once leave a slot to an upload', async () => {
    const app = await startTestApp();
    try {
      const server = await onlineServer(app);
      await putCharts(app, [
        [301, 10],
        [302, 10],
      ]);
      const a = await onlinePlayer(app, server);
      const b = await onlinePlayer(app, server);
      await upload(app, server, record(server, a, gameplay(301, { acc: 99 })));
      await upload(app, server, record(server, a, gameplay(302, { acc: 99 })));
      const counts = holdSqlCounts(app);
      try {
        // Both under ADMIN_TOKEN: one caller. The second waits for the first's count, with a slot free.
        const profiles = [app.admin.get(`/admin/players/${a.uid}`), app.admin.get(`/admin/players/${a.uid}`)];
        while (counts.held() < 1) await sleep(10);
        await sleep(300);
        expect(counts.held()).toBe(1);
        const uploaded = upload(app, server, record(server, b, gameplay(301, { acc: 98 })));
        while (counts.held() < 2) await sleep(10);
        counts.release();
        for (const profile of await Promise.all(profiles)) {
          expect(profile.status).toBe(200);
          expect((profile.body as { siteRank: number; bests: Array<{ trackRank: number }> }).siteRank).toBe(1);
          expect((profile.body as { bests: Array<{ trackRank: number }> }).bests.map((best) => best.trackRank)).toEqual(
            [1, 1],
          );
        }
        expect((await uploaded).body).toMatchObject({ siteRank: 2, trackRank: 2, personalBest: true });
      } finally {
        counts.restore();
      }
    } finally {
      await app.close();
    }
  });

  it('keeps the ranks after a restart (the index is loaded from the tables)', async () => {
    const app = await startTestApp();
    try {
      const server = await onlineServer(app);
      await putCharts(app, [[301, 10]]);
      const a = await onlinePlayer(app, server);
      const b = await onlinePlayer(app, server);
      await upload(app, server, record(server, a, gameplay(301, { acc: 100 })));
      await upload(app, server, record(server, b, gameplay(301, { acc: 99 })));
      await app.restart(); // sessions live on in the database
      expect((await upload(app, server, record(server, b, gameplay(301, { acc: 1, pass: false })))).body).toEqual({
        atp: 0.3833,
        siteRank: 2,
        trackRank: 2,
        playRating: 0,
        personalBest: false,
      });
    } finally {
      await app.close();
    }
  });
});
