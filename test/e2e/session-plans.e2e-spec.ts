// node-postgres' query object (untyped): every statement the service sends is submitted through it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const PgQuery = require('pg/lib/query') as {
  new (): PgQuery;
  prototype: PgQuery;
};
interface PgQuery {
  text?: string;
  values?: unknown[];
  submit: (this: PgQuery, ...args: unknown[]) => unknown;
}
import { loginPlayer, onlinePlayer } from '../factories/player.factory';
import { onlineServer } from '../factories/server.factory';
import { startTestApp, TestApp } from '../support/test-app';
import { WsClient } from '../support/ws-client';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/** How each scan of a plan reads player_session: "<index>: <condition>", or the node type when it reads no index. */
const sessionReads = (plan: PlanNode): string[] =>
  nodesOf(plan)
    .filter((node) => node['Relation Name'] === 'player_session' && node['Node Type'] !== 'ModifyTable')
    .map((node) =>
      node['Index Name'] ? `${node['Index Name']}: ${node['Index Cond'] ?? 'no index condition'}` : node['Node Type'],
    );

/**
 * Issue #16: the statements that change one open player session (resume_session, an options sync,
 * a logout) must reach it through one index lookup whatever the planner's statistics say. With
 * statistics taken while every session was closed (every game server restarted, then autovacuum
 * or a scheduled ANALYZE ran), PostgreSQL believes the partial index of open sessions is empty and,
 * given only the session id, walks all of it (the network day's resume_session: 20,000 entries a
 * call). The statements also name the uid, so that index is read at one key as well.
 */
describe('Player session statements under stale statistics', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ redis: false });
  });
  afterAll(async () => {
    await app.close();
  });

  it('resume_session, the options sync and the logout read player_session by index condition only', async () => {
    const server = await onlineServer(app);
    const [serverSession] = await app.sql<{ id: string }>(
      'SELECT id FROM server_session WHERE ended_at IS NULL ORDER BY created_at DESC LIMIT 1',
    );
    // 400 players with one closed session each, analyzed closed; then 300 of them open again.
    await app.sql(
      `WITH p AS (
         INSERT INTO player (uuid, username, display_name, extra_options)
         SELECT gen_random_uuid(), 'stale' || g, '', '{}'::jsonb FROM generate_series(1, 400) g RETURNING uid
       )
       INSERT INTO player_session (uid, server_session_id, token_hash, token_expires_at, mode, logged_out_at, logout_reason)
       SELECT uid, $1, md5(uid::text) || md5('x' || uid::text), now() + interval '1 hour', 'TOKEN', now(), 'logout' FROM p`,
      [serverSession.id],
    );
    // Statistics of that moment, kept: no autoanalyze may refresh them before the EXPLAINs.
    await app.sql('ALTER TABLE player_session SET (autovacuum_enabled = off)');
    await app.sql('ANALYZE player_session');
    await app.sql(
      `UPDATE player_session SET logged_out_at = NULL, logout_reason = NULL
        WHERE id IN (SELECT id FROM player_session WHERE logged_out_at IS NOT NULL ORDER BY id LIMIT 300)`,
    );
    const player = await onlinePlayer(app, server);
    const ws = await WsClient.connect(app.baseUrl, server.accessToken);

    // The service's own statements, as node-postgres submits them (both database modes go through it).
    const sent: Array<{ text: string; values: unknown[] }> = [];
    const submit = PgQuery.prototype.submit;
    PgQuery.prototype.submit = function (this: PgQuery, ...args: unknown[]): unknown {
      if (/UPDATE\s+"?player_session"?|rhythmc_renew_player_session/i.test(this.text ?? ''))
        sent.push({ text: this.text as string, values: this.values ?? [] });
      return submit.apply(this, args);
    };
    try {
      const renewed = await ws.request('resume_session', { uid: player.uid, accessToken: player.accessToken });
      expect(renewed.data).toEqual({ uid: player.uid, ok: true, expiresIn: 600 });
      const options = await app.http.post(
        '/player/options',
        { uid: player.uid, accessToken: player.accessToken, options: { continueEnabled: true } },
        { token: server.accessToken },
      );
      expect(options.status).toBe(200);
      const logout = await app.http.post(
        '/player/logout',
        { uid: player.uid, accessToken: player.accessToken },
        { token: server.accessToken },
      );
      expect(logout.status).toBe(204);
    } finally {
      PgQuery.prototype.submit = submit;
      ws.close();
    }

    // resume_session's call of rhythmc_renew_player_session, the options sync's renewal and the logout.
    expect(sent).toHaveLength(3);
    expect(sent[0].text).toMatch(/^SELECT \* FROM rhythmc_renew_player_session\(/);
    // Each names the player's uid (a parameter bound to it), not only the session id.
    for (const { values } of sent) expect(values.map(String)).toContain(String(player.uid));
    for (const { text } of sent.slice(1)) expect(text).toMatch(/\buid"? = \$\d+/);
    const explain = async (text: string, values: unknown[]) => {
      const [row] = await app.sql<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${text}`, values);
      return sessionReads(row['QUERY PLAN'][0].Plan);
    };
    // The function's own two statements, as its body has them, with the call's values bound.
    const [{ body }] = await app.sql<{ body: string }>(
      `SELECT prosrc AS body FROM pg_proc WHERE proname = 'rhythmc_renew_player_session'`,
    );
    const [{ id: sessionId }] = await app.sql<{ id: string }>('SELECT id FROM player_session WHERE uid = $1', [
      player.uid,
    ]);
    // Each name of the body becomes the call's value as a typed literal (v_id: the session the token names).
    const literal = (value: unknown) => `'${value instanceof Date ? value.toISOString() : String(value)}'`;
    const bound = [
      ['p_token_hash', 'bpchar'],
      ['p_uid', 'bigint'],
      ['p_server_session_id', 'uuid'],
      ['p_now', 'timestamptz'],
      ['p_expires_at', 'timestamptz'],
    ].map(([name, type], n) => [name, `${literal(sent[0].values[n])}::${type}`]);
    bound.push(['v_id', `${literal(sessionId)}::uuid`]);
    const bind = (statement: string) =>
      bound.reduce((text, [name, value]) => text.replace(new RegExp(`\\b${name}\\b`, 'g'), value), statement);
    const find = bind(/SELECT s\.id[^;]*/.exec(body)![0].replace(/\s+INTO v_id, uid, live, v_bound/, ''));
    const update = bind(/UPDATE player_session ps[^;]*/.exec(body)![0]);
    expect(update).toContain(`ps.uid = '${player.uid}'::bigint`);
    const resume = [...(await explain(find, [])), ...(await explain(update, []))];
    const [optionsSync, logout] = [
      await explain(sent[1].text, sent[1].values),
      await explain(sent[2].text, sent[2].values),
    ];
    // The token's row by its unique token index, then the update at the player's one open session
    // (the parameters are bound, so the conditions show their values).
    const atOneOpenSession = /^(UQ_player_session_open_per_player: \(uid = |PK_\w+: \(id = )/;
    expect(resume).toEqual([
      expect.stringMatching(/^UQ_\w+: \(token_hash = /),
      expect.stringMatching(atOneOpenSession),
    ]);
    expect(optionsSync).toEqual([expect.stringMatching(atOneOpenSession)]);
    expect(logout).toEqual([expect.stringMatching(atOneOpenSession)]);
    // What was written: the player's session renewed, then logged out; the 300 others untouched.
    expect(
      await app.sql(`SELECT logout_reason, renewed_at > created_at AS renewed FROM player_session WHERE uid = $1`, [
        player.uid,
      ]),
    ).toEqual([{ logout_reason: 'logout', renewed: true }]);
    expect(await app.sql(`SELECT count(*)::int AS n FROM player_session WHERE logged_out_at IS NULL`)).toEqual([
      { n: 300 },
    ]);
  });

  it("a login closes the player's expired session (reason expired) and opens a new one", async () => {
    // rhythmc_player_login's close names the uid too (migrations/1795720000000-LoginClosesSessionByUid.ts).
    const server = await onlineServer(app);
    const first = await onlinePlayer(app, server);
    await app.sql(`UPDATE player_session SET token_expires_at = now() - interval '1 second' WHERE uid = $1`, [
      first.uid,
    ]);
    const openBefore = await app.sql<{ n: number }>(
      'SELECT count(*)::int AS n FROM player_session WHERE logged_out_at IS NULL',
    );

    // The function's close names the uid (its plan is out of EXPLAIN's reach; its text is not).
    const [login] = await app.sql<{ def: string }>(`SELECT pg_get_functiondef('rhythmc_player_login'::regproc) AS def`);
    expect(login.def).toContain('WHERE s.id = v_open.id AND s.uid = v_uid AND s.logged_out_at IS NULL');

    const again = await loginPlayer(app, server, first, 2);
    expect(again.accessToken).not.toBe(first.accessToken);
    expect(
      await app.sql(
        `SELECT logout_reason, logged_out_at IS NULL AS open FROM player_session WHERE uid = $1 ORDER BY created_at, open`,
        [first.uid],
      ),
    ).toEqual([
      { logout_reason: 'expired', open: false },
      { logout_reason: null, open: true },
    ]);
    // Only the player's own session was closed: as many open sessions as before.
    expect(await app.sql('SELECT count(*)::int AS n FROM player_session WHERE logged_out_at IS NULL')).toEqual(
      openBefore,
    );
  });
});
