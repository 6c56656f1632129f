import type { QueryRunner } from 'typeorm';
import { ScoreIntegrity1795628083856 } from '../../migrations/1795628083856-ScoreIntegrity';
import { onlinePlayer } from '../factories/player.factory';
import { onlineServer } from '../factories/server.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { startTestApp, TestApp } from '../support/test-app';

/** Every play_record column but id, to copy a stored record as another player's or another level's. */
const RECORD_COLUMNS = `player_timestamp_ms, acc, pass, full_combo, all_perfect, is_new_record, max_combo, is_rival, is_win, rival_uid, rival_acc,
  tap_perfect, tap_great, tap_miss, hold_perfect, hold_great, hold_miss, dodge_perfect, dodge_great, dodge_miss, look_perfect, look_great, look_miss,
  player_arena, server_id, server_name, server_country, server_session_id, player_session_id`;

/**
 * The data steps of the ScoreIntegrity migration, on the database the tests run on: its down()
 * brings the old rules back (bests by earliest payload.time), the test adds what an older version
 * stored (bests on a placeholder chart), and up() must move everything to the new rules.
 */
describe('ScoreIntegrity migration', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ redis: false });
  });
  afterAll(async () => {
    await app.close();
  });

  it('moves bests to the acceptance-time rule, takes placeholder charts out of the rankings and starts the version sequence above every version', async () => {
    await defineCharts(app, [1]);
    const server = await onlineServer(app);
    const [a, b] = [await onlinePlayer(app, server), await onlinePlayer(app, server)];
    const t0 = Date.now() - 3_600_000;
    const send = (levelID: number, acc: number, time: number) =>
      app.http.post(
        '/player/upload',
        {
          player: { playerUID: a.uid, accessToken: a.accessToken, timestamp: time },
          server: { serverID: server.serverID, serverName: 'mig', country: 'DE' },
          payload: gameplayPayload(levelID, time, { acc }),
        },
        { token: server.accessToken },
      );
    // Accepted first with the later payload.time, then the same acc with an earlier payload.time.
    expect((await send(1, 99, t0 + 2_000)).status).toBe(200);
    expect((await send(1, 99, t0 + 1_000)).status).toBe(200);
    const [first, second] = await app.sql<{ id: string; received_ms: string }>(
      `SELECT id, floor(extract(epoch FROM received_at) * 1000)::text AS received_ms FROM play_record WHERE uid = $1 ORDER BY id`,
      [a.uid],
    );

    const runner = { query: (text: string, params?: unknown[]) => app.sql(text, params) } as unknown as QueryRunner;
    const migration = new ScoreIntegrity1795628083856();
    // Later migrations' triggers on play_record (the webhooks' outbox) depend on the columns this
    // migration adds: set aside while its down() and up() run, then put back as they were.
    const triggers = await app.sql<{ name: string; definition: string }>(
      `SELECT tgname AS name, pg_get_triggerdef(oid) AS definition FROM pg_trigger
        WHERE tgrelid = 'play_record'::regclass AND NOT tgisinternal ORDER BY tgname`,
    );
    for (const { name } of triggers) await app.sql(`DROP TRIGGER "${name}" ON play_record`);
    await migration.down(runner);
    // The old rule: the earliest payload.time holds the best.
    expect(
      await app.sql('SELECT record_id, first_time_ms::text FROM player_chart_best WHERE uid = $1', [a.uid]),
    ).toEqual([{ record_id: second.id, first_time_ms: String(t0 + 1_000) }]);
    // What an older version stored for an unknown level: a placeholder row, bests rated 0 on it, and b ranked only by it.
    await app.sql(
      `INSERT INTO chart (level_id, name, difficulty_constant, version, active) VALUES (555, 'Level 555', 0, 'unknown', false)`,
    );
    for (const uid of [a.uid, b.uid]) {
      const [copy] = await app.sql<{ id: string }>(
        `INSERT INTO play_record (uid, level_id, time_ms, ${RECORD_COLUMNS}) SELECT $2, 555, time_ms, ${RECORD_COLUMNS} FROM play_record WHERE id = $1 RETURNING id`,
        [first.id, uid],
      );
      await app.sql(
        `INSERT INTO player_chart_best (uid, level_id, acc, first_time_ms, record_id, rating, version) VALUES ($1, 555, 99, $2, $3, 0, 7)`,
        [uid, t0, copy.id],
      );
    }
    await app.sql(`INSERT INTO player_rating (uid, atp, version) VALUES ($1, 0, 7)`, [b.uid]);
    await app.sql('UPDATE player_rating SET version = 41 WHERE uid = $1', [a.uid]);
    const [{ atp }] = await app.sql<{ atp: string }>('SELECT atp::text FROM player_rating WHERE uid = $1', [a.uid]);
    const [{ generation }] = await app.sql<{ generation: string }>('SELECT generation::text FROM rank_ban_generation');

    await migration.up(runner);
    for (const { definition } of triggers) await app.sql(definition);

    expect(
      await app.sql('SELECT level_id, placeholder FROM chart WHERE level_id IN (1, 555) ORDER BY level_id'),
    ).toEqual([
      { level_id: 1, placeholder: false },
      { level_id: 555, placeholder: true },
    ]);
    // The first accepted play holds the best, first reached when the service accepted it.
    expect(
      await app.sql('SELECT level_id, record_id, first_time_ms::text FROM player_chart_best WHERE uid = $1', [a.uid]),
    ).toEqual([{ level_id: 1, record_id: first.id, first_time_ms: first.received_ms }]);
    expect(await app.sql('SELECT 1 FROM player_chart_best WHERE uid = $1', [b.uid])).toEqual([]);
    expect(
      await app.sql('SELECT uid::int, atp::text FROM player_rating WHERE uid IN ($1, $2)', [a.uid, b.uid]),
    ).toEqual([{ uid: a.uid, atp }]);
    expect(await app.sql("SELECT nextval('rank_version_seq')::int AS next")).toEqual([{ next: 42 }]);
    expect(await app.sql('SELECT generation::text FROM rank_ban_generation')).toEqual([
      { generation: String(Number(generation) + 1) },
    ]);
    expect(
      await app.sql(
        'SELECT count(*)::int AS n FROM play_record WHERE cardinality(flags) > 0 OR approved_at IS NOT NULL OR voided_at IS NOT NULL',
      ),
    ).toEqual([{ n: 0 }]);
  });
});
