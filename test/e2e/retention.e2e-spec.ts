import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { runSourceScript } from '../support/source-script';
import { eventually, sleep } from '../support/wait';
import { multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';
import { RETENTION_KEPT, RETENTION_PURGES } from '../../src/retention/retention.map';
import { RetentionRepository } from '../../src/retention/retention.repository';
import { PurgeResult, RetentionService } from '../../src/retention/retention.service';

/** Every purge on at 30 days, small batches (several per table), no timer run during the test. */
const RETENTION_ON = {
  RETENTION_SESSIONS_DAYS: '30',
  RETENTION_WS_CONNECTIONS_DAYS: '30',
  RETENTION_BALANCE_HISTORY_DAYS: '30',
  RETENTION_FAILED_PLAYS_DAYS: '30',
  RETENTION_WEBHOOK_DELIVERIES_DAYS: '30',
  RETENTION_BATCH_SIZE: '100',
  RETENTION_INTERVAL_MINUTES: '10080',
};

/** Old failed plays added in bulk (three batches of 100 with the three of the uploads). */
const BULK_FAILED_PLAYS = 250;

/** What the seed expects each purge to delete, and the rows it expects to stay. */
const EXPECTED_DELETED: Record<string, number> = {
  player_session_takeover: 1,
  player_session: 4,
  server_session: 2,
  ws_connection: 2,
  balance_history: 2,
  play_record: BULK_FAILED_PLAYS + 3,
  webhook_delivery: 2,
};

const TABLES = Object.keys(EXPECTED_DELETED);

let time = Date.now() - 3_600_000;

async function upload(
  app: TestApp,
  server: TestServerSession,
  player: TestPlayerSession,
  levelID: number,
  overrides: Record<string, unknown>,
): Promise<string> {
  const payload = gameplayPayload(levelID, (time += 1_000), overrides);
  const response = await app.http.post(
    '/player/upload',
    {
      player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: payload.time },
      server: { serverID: server.serverID, serverName: 'retention', country: 'DE' },
      payload,
    },
    { token: server.accessToken },
  );
  expect(response.status).toBe(200);
  const [row] = await app.sql<{ id: string }>('SELECT id FROM play_record WHERE uid = $1 AND time_ms = $2', [
    player.uid,
    payload.time,
  ]);
  return row.id;
}

const hash = `md5(random()::text) || md5(random()::text)`;

async function serverSession(app: TestApp, serverId: number, endedDaysAgo: number | null): Promise<string> {
  const [row] = await app.sql<{ id: string }>(
    `INSERT INTO server_session (server_id, token_hash, token_expires_at, plugin_version, plugin_sha, created_at, ended_at, end_reason)
     VALUES ($1, ${hash}, now() - make_interval(days => 60), 1, 'sha', now() - make_interval(days => 60),
             now() - make_interval(days => $2), 'logout')
     RETURNING id`,
    [serverId, endedDaysAgo],
  );
  return row.id;
}

async function playerSession(app: TestApp, uid: number, serverSessionId: string, loggedOutDaysAgo: number) {
  const [row] = await app.sql<{ id: string }>(
    `INSERT INTO player_session (uid, server_session_id, token_hash, token_expires_at, mode, created_at, logged_out_at, logout_reason)
     VALUES ($1, $2, ${hash}, now() - make_interval(days => 60), 'ONLINE', now() - make_interval(days => 60),
             now() - make_interval(days => $3), 'logout')
     RETURNING id`,
    [uid, serverSessionId, loggedOutDaysAgo],
  );
  return row.id;
}

async function takeover(app: TestApp, uid: number, from: string, to: string, serverId: number, daysAgo: number) {
  const [row] = await app.sql<{ id: string }>(
    `INSERT INTO player_session_takeover (uid, taken_at, from_session_id, from_server_id, to_session_id, to_server_id, proof)
     VALUES ($1, now() - make_interval(days => $5), $2, $4, $3, $4, 'TOKEN') RETURNING id`,
    [uid, from, to, serverId, daysAgo],
  );
  return row.id;
}

interface Seeded {
  server: TestServerSession;
  /** Row ids that must stay, per table. */
  kept: Record<string, string[]>;
  /** Row ids that must go, per table. */
  doomed: Record<string, string[]>;
}

/**
 * Rows of every purged kind, old (40 days) and young (10 days), and old rows something kept still
 * refers to; plays through real uploads (bests, ATP, a flagged play, a voided one), the rest in SQL.
 */
async function seed(app: TestApp): Promise<Seeded> {
  await defineCharts(app, [701, 702]);
  const server = await onlineServer(app);
  const x = await onlinePlayer(app, server);
  const y = await onlinePlayer(app, server);
  const kept: Record<string, string[]> = Object.fromEntries(TABLES.map((t) => [t, []]));
  const doomed: Record<string, string[]> = Object.fromEntries(TABLES.map((t) => [t, []]));

  // Sessions. The live server session and the two live player sessions stay (not ended).
  const [live] = await app.sql<{ id: string }>('SELECT id FROM server_session WHERE server_id = $1', [server.serverID]);
  kept.server_session.push(live.id);
  for (const p of [x, y])
    kept.player_session.push(
      (await app.sql<{ id: string }>('SELECT id FROM player_session WHERE uid = $1', [p.uid]))[0].id,
    );
  const emptyOld = await serverSession(app, server.serverID, 40);
  doomed.server_session.push(emptyOld);
  const young = await serverSession(app, server.serverID, 10);
  kept.server_session.push(young);
  // Old, but one of its player sessions ended 10 days ago: both stay.
  const oldWithYoungPlayer = await serverSession(app, server.serverID, 40);
  kept.server_session.push(oldWithYoungPlayer);
  kept.player_session.push(await playerSession(app, x.uid, oldWithYoungPlayer, 10));
  // Old with old player sessions, two of them named by an old takeover: everything goes.
  const oldB = await serverSession(app, server.serverID, 40);
  doomed.server_session.push(oldB);
  doomed.player_session.push(await playerSession(app, x.uid, oldB, 40));
  const from = await playerSession(app, y.uid, oldB, 40);
  const to = await playerSession(app, y.uid, oldB, 40);
  doomed.player_session.push(from, to);
  doomed.player_session_takeover.push(await takeover(app, y.uid, from, to, server.serverID, 40));
  // Old with an old player session that a young takeover names: the takeover keeps both sessions.
  const oldC = await serverSession(app, server.serverID, 40);
  kept.server_session.push(oldC);
  const named = await playerSession(app, x.uid, oldC, 40);
  const namedTo = await playerSession(app, x.uid, oldC, 40);
  kept.player_session.push(named, namedTo);
  kept.player_session_takeover.push(await takeover(app, x.uid, named, namedTo, server.serverID, 10));
  // An old player session of the live server session: it goes, the server session stays.
  doomed.player_session.push(await playerSession(app, y.uid, live.id, 40));

  // WebSocket connection records.
  const connection = async (connectedDays: number, closedDays: number | null, seenDays: number) =>
    (
      await app.sql<{ id: string }>(
        `INSERT INTO ws_connection (id, instance_id, server_id, server_session_id, connected_at, last_seen_at, closed_at, close_code)
         VALUES (gen_random_uuid(), 'instance', $1, $2, now() - make_interval(days => $3),
                 now() - make_interval(days => $5), now() - make_interval(days => $4), $6) RETURNING id`,
        [server.serverID, live.id, connectedDays, closedDays, seenDays, closedDays === null ? null : 1000],
      )
    )[0].id;
  doomed.ws_connection.push(await connection(41, 40, 40)); // closed 40 days ago
  doomed.ws_connection.push(await connection(41, null, 40)); // its instance died 40 days ago
  kept.ws_connection.push(await connection(41, 10, 10)); // opened long ago, closed 10 days ago
  kept.ws_connection.push(await connection(41, null, 0)); // open since, seen now

  // Balance history: three syncs, the first two 40 days ago.
  for (const wattHour of [1000, 2000, 3000])
    expect(
      (
        await app.http.post(
          '/player/economy',
          { uid: x.uid, accessToken: x.accessToken, wattHour },
          { token: server.accessToken },
        )
      ).status,
    ).toBe(200);
  const history = await app.sql<{ id: string }>('SELECT id FROM balance_history WHERE uid = $1 ORDER BY id', [x.uid]);
  expect(history).toHaveLength(3);
  await app.sql(`UPDATE balance_history SET created_at = now() - interval '40 days' WHERE id = ANY($1::bigint[])`, [
    history.slice(0, 2).map((h) => h.id),
  ]);
  doomed.balance_history.push(...history.slice(0, 2).map((h) => h.id));
  kept.balance_history.push(history[2].id);

  // Plays. x: a superseded pass, the best, a failed play, a flagged failed play, a voided failed
  // play, a best on 702. y: a pass, two failed plays, and a young failed play.
  kept.play_record.push(await upload(app, server, x, 701, { acc: 95 }));
  kept.play_record.push(await upload(app, server, x, 701, { acc: 97 }));
  doomed.play_record.push(await upload(app, server, x, 701, { acc: 40, pass: false }));
  kept.play_record.push(await upload(app, server, x, 701, { acc: 50, pass: false, allPerfect: true }));
  const voided = await upload(app, server, x, 701, { acc: 45, pass: false });
  expect((await app.admin.post(`/admin/plays/${voided}/void`, { reason: 'test' })).status).toBe(200);
  kept.play_record.push(voided);
  kept.play_record.push(await upload(app, server, x, 702, { acc: 99 }));
  kept.play_record.push(await upload(app, server, y, 701, { acc: 96 }));
  doomed.play_record.push(await upload(app, server, y, 701, { acc: 30, pass: false }));
  doomed.play_record.push(await upload(app, server, y, 702, { acc: 20, pass: false }));
  const youngFail = await upload(app, server, y, 702, { acc: 25, pass: false });
  await app.sql(`UPDATE play_record SET received_at = received_at - interval '40 days' WHERE id <> $1`, [youngFail]);
  kept.play_record.push(youngFail);
  const columns = (
    await app.sql<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'play_record' AND column_name NOT IN ('id', 'time_ms')
        ORDER BY ordinal_position`,
    )
  ).map((c) => `"${c.column_name}"`);
  const bulk = await app.sql<{ id: string }>(
    `INSERT INTO play_record (${columns.join(', ')}, time_ms)
     SELECT ${columns.map((c) => `r.${c}`).join(', ')}, r.time_ms + g
       FROM play_record r, generate_series(1, ${BULK_FAILED_PLAYS}) g WHERE r.id = $1
     RETURNING id`,
    [doomed.play_record[0]],
  );
  doomed.play_record.push(...bulk.map((b) => b.id));
  // Bests' first times follow the aged plays: recompute once, so the state compared is settled.
  expect((await app.admin.post('/admin/ratings/recompute')).status).toBe(200);

  // Webhook deliveries (the webhook is off: nothing is sent).
  const [hook] = await app.sql<{ id: number }>(
    `INSERT INTO webhook (name, url, events, secret, enabled) VALUES ('r', 'https://example.invalid/h', '{play.flagged}', 's', false) RETURNING id`,
  );
  const delivery = async (state: string, days: number) =>
    (
      await app.sql<{ id: string }>(
        `INSERT INTO webhook_delivery (webhook_id, event_id, event_type, payload, state, created_at, delivered_at)
         VALUES ($1, gen_random_uuid(), 'play.flagged', '{}', $2::varchar, now() - make_interval(days => $3),
                 CASE WHEN $2::varchar = 'delivered' THEN now() - make_interval(days => $3) END) RETURNING id`,
        [hook.id, state, days],
      )
    )[0].id;
  doomed.webhook_delivery.push(await delivery('delivered', 40), await delivery('failed', 40));
  kept.webhook_delivery.push(await delivery('pending', 40), await delivery('delivered', 10));
  return { server, kept, doomed };
}

/** Row counts of every table of the schema. */
async function tableCounts(app: TestApp): Promise<Record<string, number>> {
  const tables = await app.sql<{ t: string }>(
    `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`,
  );
  const counts: Record<string, number> = {};
  for (const { t } of tables)
    counts[t] = Number((await app.sql<{ n: string }>(`SELECT count(*) AS n FROM "${t}"`))[0].n);
  return counts;
}

/** Everything a purge of plays must leave as it was: bests, ATP, both boards, the review lists. */
async function rankState(app: TestApp, server: TestServerSession) {
  const get = async (path: string, token?: string) => {
    const response = await app.http.get(path, token === undefined ? undefined : { token });
    expect(response.status).toBe(200);
    return response.body as unknown;
  };
  return {
    bests: await app.sql(
      'SELECT uid, level_id, acc, first_time_ms, record_id, rating FROM player_chart_best ORDER BY uid, level_id',
    ),
    ratings: await app.sql('SELECT uid, atp FROM player_rating ORDER BY uid'),
    atpBoard: await get('/server/leaderboards/atp', server.accessToken),
    chartBoards: [
      await get('/server/leaderboards/charts/701', server.accessToken),
      await get('/server/leaderboards/charts/702', server.accessToken),
    ],
    flagged: (await app.admin.get('/admin/plays?state=flagged')).body as unknown,
    voided: (await app.admin.get('/admin/plays?state=voided')).body as unknown,
  };
}

async function remaining(app: TestApp, table: string, ids: string[]): Promise<string[]> {
  return (
    await app.sql<{ id: string }>(
      `SELECT id::text AS id FROM ${table} WHERE id::text = ANY($1::text[]) ORDER BY id::text`,
      [ids],
    )
  ).map((r) => r.id);
}

const deletedBy = (runs: PurgeResult[][]) =>
  Object.fromEntries(TABLES.map((t) => [t, runs.flat().reduce((n, r) => n + (r.table === t ? r.deleted : 0), 0)]));

describe('Retention', () => {
  it('lists every table of the schema as purged or kept, and nothing twice', async () => {
    const app = await startTestApp();
    try {
      const tables = (
        await app.sql<{ t: string }>(
          `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`,
        )
      ).map((r) => r.t);
      const purged = RETENTION_PURGES.map((p) => p.table);
      expect(new Set(purged).size).toBe(purged.length);
      expect(purged.filter((t) => t in RETENTION_KEPT)).toEqual([]);
      expect([...purged, ...Object.keys(RETENTION_KEPT)].sort()).toEqual(tables);
      expect(purged.sort()).toEqual([...TABLES].sort());
    } finally {
      await app.close();
    }
  });

  describe('with every setting at 30 days', () => {
    let app: TestApp;
    let seeded: Seeded;

    beforeAll(async () => {
      app = await startTestApp({ env: RETENTION_ON });
      seeded = await seed(app);
    }, 120_000);
    afterAll(() => app.close());

    it('deletes the old rows of each kind in batches, keeps young rows and what kept rows refer to, and leaves ranks, ATP, bests and reviews as they were', async () => {
      const before = await tableCounts(app);
      const ranksBefore = await rankState(app, seeded.server);
      const results = await app.get(RetentionService).runOnce();
      expect(results).toEqual(
        RETENTION_PURGES.map((p) => ({
          table: p.table,
          days: 30,
          outcome: 'ok',
          deleted: EXPECTED_DELETED[p.table],
          batches: Math.floor(EXPECTED_DELETED[p.table] / 100) + 1,
        })),
      );
      const after = await tableCounts(app);
      const expectedCounts = { ...before };
      for (const t of TABLES) expectedCounts[t] -= EXPECTED_DELETED[t];
      // Every other table as it was (audit rows, bests, ratings, balances, …), plus the run records.
      expect(after).toEqual({ ...expectedCounts, retention_run: TABLES.length });
      for (const t of TABLES) {
        expect({ t, gone: await remaining(app, t, seeded.doomed[t]) }).toEqual({ t, gone: [] });
        expect({ t, kept: await remaining(app, t, seeded.kept[t]) }).toEqual({
          t,
          kept: [...seeded.kept[t]].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
        });
      }
      expect(await app.sql('SELECT watt_hour FROM player_balance')).toEqual([{ watt_hour: '3000' }]);
      expect(await rankState(app, seeded.server)).toEqual(ranksBefore);
      // A recompute from the plays left finds the same bests and ATP: nothing that counts, or may
      // count after a review, was deleted.
      expect((await app.admin.post('/admin/ratings/recompute')).body).toMatchObject({ atpChanged: 0 });
      expect(await rankState(app, seeded.server)).toEqual(ranksBefore);

      expect(
        await app.sql(
          `SELECT purge, lease_owner, lease_until, last_outcome, last_deleted::int AS deleted, last_batches, last_error
             FROM retention_run ORDER BY purge`,
        ),
      ).toEqual(
        [...TABLES].sort().map((purge) => ({
          purge,
          lease_owner: null,
          lease_until: null,
          last_outcome: 'ok',
          deleted: EXPECTED_DELETED[purge],
          last_batches: Math.floor(EXPECTED_DELETED[purge] / 100) + 1,
          last_error: null,
        })),
      );
      const metrics = (await app.http.get('/metrics')).text;
      for (const t of TABLES) {
        expect(metrics).toContain(`rhythmc_retention_deleted_rows_total{table="${t}"} ${EXPECTED_DELETED[t]}\n`);
        expect(metrics).toContain(`rhythmc_retention_runs_total{table="${t}",outcome="ok"} 1\n`);
      }

      // A second run finds nothing more (the recompute above wrote its audit row).
      const settled = await tableCounts(app);
      expect(settled).toEqual({ ...after, admin_audit: after.admin_audit + 1 });
      expect((await app.get(RetentionService).runOnce()).map((r) => [r.table, r.outcome, r.deleted])).toEqual(
        RETENTION_PURGES.map((p) => [p.table, 'ok', 0]),
      );
      expect(await tableCounts(app)).toEqual(settled);
    });
  });

  it('reads a batch along its index and deletes by primary key, on tables never analyzed and 20,000 rows deep', async () => {
    const app = await startTestApp({ env: RETENTION_ON });
    try {
      const [hook] = await app.sql<{ id: number }>(
        `INSERT INTO webhook (name, url, events, secret, enabled) VALUES ('r', 'https://example.invalid/h', '{play.flagged}', 's', false) RETURNING id`,
      );
      for (const table of ['webhook_delivery', 'ws_connection']) {
        // Never analyzed (a new deployment, or a backlog grown since the last ANALYZE).
        await app.sql(`DELETE FROM pg_statistic WHERE starelid = '${table}'::regclass`);
        await app.sql(`UPDATE pg_class SET reltuples = -1, relpages = 0 WHERE oid = '${table}'::regclass`);
      }
      // 20,000 of each ended 40 days ago, oldest first in g.
      await app.sql(
        `INSERT INTO webhook_delivery (webhook_id, event_id, event_type, payload, state, attempts, created_at, delivered_at)
         SELECT $1, gen_random_uuid(), 'play.flagged', '{}', 'delivered', 1, t, t
           FROM (SELECT now() - interval '40 days' - make_interval(secs => 20000 - g) AS t FROM generate_series(1, 20000) g) x`,
        [hook.id],
      );
      await app.sql(
        `INSERT INTO ws_connection (id, instance_id, server_id, server_session_id, connected_at, last_seen_at, closed_at, close_code)
         SELECT gen_random_uuid(), 'gone', 1, gen_random_uuid(), t, t, t, 1000
           FROM (SELECT now() - interval '40 days' - make_interval(secs => 20000 - g) AS t FROM generate_series(1, 20000) g) x`,
      );
      const cases = [
        { table: 'webhook_delivery', order: 'created_at', index: 'IDX_webhook_delivery_finished' },
        { table: 'ws_connection', order: 'connected_at', index: 'IDX_ws_connection_connected' },
      ];
      for (const { table, order, index } of cases) {
        const [{ pk }] = await app.sql<{ pk: string }>(
          `SELECT conname AS pk FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'`,
          [table],
        );
        const oldest = await app.sql<{ id: string }>(
          `SELECT id::text AS id FROM ${table} ORDER BY ${order} LIMIT 2000`,
        );
        // This session's own reads counted before the reset, not after it.
        await app.sql('SELECT pg_stat_force_next_flush()');
        await app.sql(`SELECT pg_stat_reset_single_table_counters('${table}'::regclass),
                              pg_stat_reset_single_table_counters('"${index}"'::regclass),
                              pg_stat_reset_single_table_counters('"${pk}"'::regclass), pg_stat_force_next_flush()`);
        const purge = RETENTION_PURGES.find((p) => p.table === table)!;
        // A session flushes its counters when it goes idle if its last flush is over a second old
        // (else up to 10 s later): the pool's sessions are left idle for that second first.
        await sleep(1_100);
        expect(
          await app.get(RetentionRepository).deleteBatch(purge, new Date(Date.now() - 30 * 86_400_000), 2_000),
        ).toBe(2_000);
        expect(
          await remaining(
            app,
            table,
            oldest.map((row) => row.id),
          ),
        ).toEqual([]);
        // The batch's counters, flushed all at once.
        await eventually(
          async () =>
            (
              await app.sql<{ deleted: number }>(
                `SELECT n_tup_del::int AS deleted FROM pg_stat_user_tables WHERE relname = $1`,
                [table],
              )
            )[0].deleted === 2_000,
          `${table}: the batch's counters`,
        );
        const read = () =>
          app.sql<{ index: string; entries: number }>(
            `SELECT indexrelname AS index, idx_tup_read::int AS entries
               FROM pg_stat_user_indexes WHERE indexrelname IN ($1, $2) ORDER BY indexrelname = $1 DESC`,
            [index, pk],
          );
        // The purge order's index read up to the batch, then one primary-key probe a row. With the
        // planner's defaults (checked): webhook_delivery's batch read all 20,000 doomed entries by a
        // bitmap scan, to sort them; ws_connection's read neither index (a sequential scan, a sort
        // and a hash join over the whole table).
        expect((await read()).map(({ index: name, entries }) => ({ name, entries }))).toEqual([
          { name: index, entries: 2_000 },
          { name: pk, entries: 2_000 },
        ]);
      }
    } finally {
      await app.close();
    }
  });

  it('deletes nothing with every setting off (the default)', async () => {
    const app = await startTestApp();
    try {
      await seed(app);
      const before = await tableCounts(app);
      expect(await app.get(RetentionService).runOnce()).toEqual([]);
      expect(await tableCounts(app)).toEqual(before);
      expect(before.retention_run).toBe(0);
    } finally {
      await app.close();
    }
  }, 120_000);

  it('two runs at once (two instances on PostgreSQL, two runs of one on the embedded database), then one more, delete each row once and fail nowhere', async () => {
    const app = await startTestApp({ env: RETENTION_ON });
    const other = multiInstanceAvailable() ? await startTestApp({ env: RETENTION_ON, shareWith: app }) : app;
    try {
      await seed(app);
      const before = await tableCounts(app);
      const runs = await Promise.all([app.get(RetentionService).runOnce(), other.get(RetentionService).runOnce()]);
      // A row can be left to the next run: one run's purge of a table may read it while the other
      // run's purge of the table it depends on has not committed yet (a server session whose last
      // player session the other run is deleting: seen once in CI). The next run takes it, and no
      // row is ever counted twice.
      runs.push(await app.get(RetentionService).runOnce());
      expect(deletedBy(runs)).toEqual(EXPECTED_DELETED);
      for (const run of runs) expect(run.filter((r) => r.outcome !== 'ok' && r.outcome !== 'skipped')).toEqual([]);
      const after = await tableCounts(app);
      for (const t of TABLES) expect({ t, n: after[t] }).toEqual({ t, n: before[t] - EXPECTED_DELETED[t] });
      expect(await app.sql('SELECT count(*)::int AS n FROM retention_run WHERE lease_owner IS NOT NULL')).toEqual([
        { n: 0 },
      ]);
    } finally {
      if (other !== app) await other.close();
      await app.close();
    }
  }, 180_000);

  it('refuses to start with a retention of 0 days, naming the variable', async () => {
    const result = await runSourceScript('src/main.ts', [], {
      RETENTION_FAILED_PLAYS_DAYS: '0',
      PORT: '0',
      HOST: '127.0.0.1',
    });
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'Invalid configuration: RETENTION_FAILED_PLAYS_DAYS must be a number of days from 1 to 36500, or off, got "0"\n',
    });
  }, 90_000);
});
