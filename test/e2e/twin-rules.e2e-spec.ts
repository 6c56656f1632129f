import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/database-options';
import { EmbeddedDatabase } from '../../src/database/embedded/embedded-database';
import { BoundTokenSession, boundTokenStatus } from '../../src/auth/bound-token.rule';
import type { PlayerLoginMode } from '../../src/auth/entities/player-session.entity';
import { activeBan, banIsActive } from '../../src/player/active-ban.rule';
import { loginProves } from '../../src/player/session-proof.rule';
import { improves } from '../../src/upload/best.rule';
import { playRating } from '../../src/upload/rating';
import { COUNTED_RECORD, recordCounts } from '../../src/upload/counted-record.rule';
import type { TrackPosition } from '../../src/ranking';
import { functionFiles } from '../support/function-files';
import { freshDatabase, TestDatabase } from '../support/test-app';

/**
 * The text of the SQL condition that starts at `start` of `text`, up to the end of the clause: a
 * closing parenthesis of an enclosing group, or LIMIT or `;` outside any parenthesis.
 */
function clauseAt(text: string, start: number): string {
  let depth = 0;
  let end = start;
  for (; end < text.length; end++) {
    const ch = text[end];
    if (ch === '(') depth++;
    else if (ch === ')') {
      if (depth === 0) break;
      depth--;
    } else if (depth === 0 && (ch === ';' || /^\sLIMIT\b/.test(text.slice(end, end + 7)))) break;
  }
  return text.slice(start, end).replace(/\s+/g, ' ').trim();
}

/**
 * The active-ban copies written inline in a function's text: each `FROM player_ban x WHERE x.uid
 * = … AND <rule>`, as the rule over an alias (the uid equality taken off). Every mention of
 * player_ban must be such a copy, so a new or reshaped one fails the test instead of escaping it.
 */
function inlineBanCopies(definition: string): Array<(ban: string) => string> {
  const copies = [...definition.matchAll(/FROM player_ban (\w+)\s+WHERE /g)].map((match) => {
    const alias = match[1];
    const clause = clauseAt(definition, (match.index ?? 0) + match[0].length);
    const uidFirst = new RegExp(`^${alias}\\.uid = [\\w.]+ AND `);
    expect({ clause, uidFirst: uidFirst.test(clause) }).toEqual({ clause, uidFirst: true });
    const rule = clause.replace(uidFirst, '');
    return (ban: string) => rule.replace(new RegExp(`\\b${alias}\\.`, 'g'), `${ban}.`);
  });
  expect(copies).toHaveLength(definition.split('player_ban').length - 1);
  return copies;
}

/**
 * The counted-record copy written inline in an upload function, for the record it has just stored
 * (never approved, never voided): `v_counted := <rule>;` over its parameters and chart row, as the
 * rule over a play_record `r` and a chart `c`.
 */
function inlineCountedCopy(definition: string): (r: string, c: string) => string {
  const copies = [...definition.matchAll(/v_counted := ([^;]+);/g)].map((match) => match[1].replace(/\s+/g, ' '));
  expect(copies).toHaveLength(1);
  const rule = copies[0];
  return (r: string, c: string) => {
    const over = rule
      .replace(/\bp_pass\b/g, `${r}.pass`)
      .replace(/\bp_flags\b/g, `${r}.flags`)
      .replace(/\bv_chart\.placeholder\b/g, `${c}.placeholder`);
    // Nothing of the function's own left: the copy reads only what a stored record and its chart hold.
    expect({ rule, leftOver: /\b[pv]_\w+/.test(over) }).toEqual({ rule, leftOver: false });
    return `(${over})`;
  };
}

/**
 * Each rule with a TypeScript and a SQL form keeps both in one `*.rule.ts` (docs/data-model.md
 * "Twin rules"). Here both forms judge the same cases on a real database (a clone of the migrated
 * template: PostgreSQL with DATABASE_URL, the embedded database otherwise) and must agree case by
 * case. Each comparison is also run with one side changed alone, and must then find a case where
 * they disagree: a comparison that cannot tell them apart proves nothing.
 */
describe('Twin rules: the TypeScript and SQL forms agree', () => {
  let database: TestDatabase;
  let embedded: EmbeddedDatabase | null = null;
  let dataSource: DataSource;

  const sql = <T>(text: string, params?: unknown[]): Promise<T[]> => dataSource.query<T[]>(text, params);

  /** What the database runs for every signature of function `name` (pg_get_functiondef; its file, by the drift test). */
  const definitionOf = async (name: string): Promise<string> =>
    (
      await sql<{ def: string }>(
        `SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname = 'public' AND p.proname = $1 ORDER BY p.oid`,
        [name],
      )
    )
      .map((row) => row.def)
      .join('\n');

  /** Runs `check` with function `name` replaced from its file with `from` changed to `to`, then puts the file back. */
  async function withChangedFunction(
    name: string,
    from: string,
    to: string,
    check: () => Promise<void>,
  ): Promise<void> {
    const file = functionFiles().find((f) => f.name === name)?.text ?? '';
    expect({ name, contains: file.includes(from) }).toEqual({ name, contains: true });
    await sql(file.replace(from, to));
    try {
      await check();
    } finally {
      await sql(file);
    }
  }

  beforeAll(async () => {
    database = await freshDatabase();
    const url = database.env.DATABASE_URL;
    if (url === '') embedded = await EmbeddedDatabase.start(database.env.DATA_DIR);
    dataSource = await new DataSource(
      buildDataSourceOptions({ url: embedded?.url ?? url, embedded: embedded !== null }),
    ).initialize();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await embedded?.stop();
    await database?.drop();
  });

  describe('the new best (upload/best.rule.ts: improves, rhythmc_best_improves)', () => {
    const accs = [0, 95, 98.5, 99.99999999999999, 100, 100.00000000000001];
    const times = [1_000, 1_001];
    const positions: TrackPosition[] = accs.flatMap((acc) => times.map((firstTimeMs) => ({ acc, firstTimeMs })));
    const cases = positions.flatMap((play) => [null, ...positions].map((best) => ({ play, best })));

    /** The cases where `typeScript` and the database's rhythmc_best_improves answer differently. */
    async function disagreements(typeScript: typeof improves): Promise<string[]> {
      const rows = await sql<{ i: string; improves: boolean }>(
        `SELECT x.i, rhythmc_best_improves(x.acc, x.time_ms, x.best_acc, x.best_time_ms) AS improves
           FROM unnest($1::float8[], $2::bigint[], $3::float8[], $4::bigint[]) WITH ORDINALITY
                AS x(acc, time_ms, best_acc, best_time_ms, i)
          ORDER BY x.i`,
        [
          cases.map((c) => c.play.acc),
          cases.map((c) => c.play.firstTimeMs),
          cases.map((c) => c.best?.acc ?? null),
          cases.map((c) => c.best?.firstTimeMs ?? null),
        ],
      );
      expect(rows).toHaveLength(cases.length);
      return cases
        .filter((c, index) => typeScript(c.play, c.best) !== rows[index].improves)
        .map((c) => JSON.stringify(c));
    }

    const fileText = () => functionFiles().find((file) => file.name === 'rhythmc_best_improves')?.text ?? '';

    it('agree on every pair of plays, and on a first play', async () => {
      expect(cases.length).toBe(12 * 13);
      expect(await disagreements(improves)).toEqual([]);
    });

    it('disagree when only the TypeScript form changes', async () => {
      const laterTies = (play: TrackPosition, best: TrackPosition | null) =>
        best === null || play.acc > best.acc || (play.acc === best.acc && play.firstTimeMs <= best.firstTimeMs);
      // A tie in acc and time: every play against itself as the best.
      expect(await disagreements(laterTies)).toHaveLength(positions.length);
    });

    it('disagree when only the SQL form changes', async () => {
      expect(fileText()).toContain('p_time_ms < b_time_ms');
      await sql(fileText().replace('p_time_ms < b_time_ms', 'p_time_ms <= b_time_ms'));
      try {
        expect(await disagreements(improves)).toHaveLength(positions.length);
      } finally {
        await sql(fileText());
      }
      expect(await disagreements(improves)).toEqual([]);
    });
  });

  describe('a counted record (upload/counted-record.rule.ts: recordCounts, COUNTED_RECORD)', () => {
    const both = [false, true];
    const cases = both.flatMap((pass) =>
      both.flatMap((voided) =>
        both.flatMap((flagged) =>
          both.flatMap((approved) =>
            [null, false, true].map((placeholder) => ({ pass, voided, flagged, approved, placeholder })),
          ),
        ),
      ),
    );

    /** The cases where `typeScript` and the SQL condition `inSql` (over a play_record `r` and its chart `c`) differ. */
    async function disagreements(
      typeScript: typeof recordCounts,
      inSql: (r: string, c: string) => string = COUNTED_RECORD,
    ): Promise<string[]> {
      // The chart is a LEFT JOIN: no chart row (placeholder null) is a record whose chart is unknown;
      // WHERE keeps a row only when the condition IS TRUE, so that is the SQL form's answer.
      const rows = await sql<{ counts: boolean }>(
        `SELECT (${inSql('r', 'c')}) IS TRUE AS counts
           FROM unnest($1::boolean[], $2::boolean[], $3::boolean[], $4::boolean[], $5::boolean[]) WITH ORDINALITY
                AS x(pass, voided, flagged, approved, placeholder, i)
          CROSS JOIN LATERAL (SELECT x.pass,
                                     CASE WHEN x.voided THEN now() END AS voided_at,
                                     CASE WHEN x.flagged THEN ARRAY['acc']::text[] ELSE '{}'::text[] END AS flags,
                                     CASE WHEN x.approved THEN now() END AS approved_at) r
           LEFT JOIN LATERAL (SELECT x.placeholder WHERE x.placeholder IS NOT NULL) c ON true
          ORDER BY x.i`,
        [
          cases.map((c) => c.pass),
          cases.map((c) => c.voided),
          cases.map((c) => c.flagged),
          cases.map((c) => c.approved),
          cases.map((c) => c.placeholder),
        ],
      );
      expect(rows).toHaveLength(cases.length);
      return cases
        .filter((c, index) => {
          const record = { pass: c.pass, voided: c.voided, flags: c.flagged ? ['acc'] : [], approved: c.approved };
          const chart = c.placeholder === null ? null : { placeholder: c.placeholder };
          return typeScript(record, chart) !== rows[index].counts;
        })
        .map((c) => JSON.stringify(c));
    }

    it('agree on every combination of pass, voided, flagged, approved and chart', async () => {
      expect(cases).toHaveLength(48);
      expect(await disagreements(recordCounts)).toEqual([]);
    });

    it('disagree when only one form changes', async () => {
      const voidedCounts: typeof recordCounts = (record, chart) => recordCounts({ ...record, voided: false }, chart);
      expect(await disagreements(voidedCounts)).toHaveLength(3);
      const placeholdersCount = (r: string, c: string) => COUNTED_RECORD(r, c).replace(` AND NOT ${c}.placeholder`, '');
      expect(COUNTED_RECORD('r', 'c')).not.toBe(placeholdersCount('r', 'c'));
      expect(await disagreements(recordCounts, placeholdersCount)).toHaveLength(3 + 3);
    });

    /** The cases a just-stored record can be (not voided, not approved; its chart row exists) where `inSql` differs from recordCounts. */
    const newRecordDisagreements = async (inSql: (r: string, c: string) => string) =>
      (await disagreements(recordCounts, inSql)).filter((c) => {
        const parsed = JSON.parse(c) as { voided: boolean; approved: boolean; placeholder: boolean | null };
        return !parsed.voided && !parsed.approved && parsed.placeholder !== null;
      });

    const name = 'rhythmc_upload_record';
    it(`agree with the copy inline in ${name}, for a record it has just stored; and not when either changes alone`, async () => {
      expect(await newRecordDisagreements(inlineCountedCopy(await definitionOf(name)))).toEqual([]);
      // The TypeScript form changed alone: flagged plays count.
      const flaggedCount: typeof recordCounts = (record, chart) => recordCounts({ ...record, flags: [] }, chart);
      const copy = inlineCountedCopy(await definitionOf(name));
      const changedTs = (await disagreements(flaggedCount, copy)).filter((c) => {
        const parsed = JSON.parse(c) as { voided: boolean; approved: boolean; placeholder: boolean | null };
        return !parsed.voided && !parsed.approved && parsed.placeholder !== null;
      });
      expect(changedTs).toEqual([
        JSON.stringify({ pass: true, voided: false, flagged: true, approved: false, placeholder: false }),
      ]);
      // The function changed alone: placeholder charts count.
      await withChangedFunction(name, ' AND NOT v_chart.placeholder;', ';', async () => {
        expect(await newRecordDisagreements(inlineCountedCopy(await definitionOf(name)))).toEqual([
          JSON.stringify({ pass: true, voided: false, flagged: false, approved: false, placeholder: true }),
        ]);
      });
    });
  });

  describe('an active ban (player/active-ban.rule.ts: banIsActive, activeBan)', () => {
    const day = 86_400_000;
    const lifted = [null, -day, day];
    const until = [null, -day, -1, 0, 1, day];
    const cases = lifted.flatMap((liftedMs) => until.map((untilMs) => ({ liftedMs, untilMs })));

    /** The cases where `typeScript` and the SQL condition `inSql` (over a player_ban `b`, at the statement's now()) differ. */
    async function disagreements(
      typeScript: typeof banIsActive,
      inSql: (ban: string) => string = activeBan,
    ): Promise<string[]> {
      // Offsets from the statement's now(), so that "until = now" is a case, to the microsecond.
      const rows = await sql<{ active: boolean; lifted_at: Date | null; until: Date | null; now: Date }>(
        `SELECT (${inSql('b')}) AS active, b.lifted_at, b.until, now() AS now
           FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS x(lifted_ms, until_ms, i)
          CROSS JOIN LATERAL (SELECT now() + x.lifted_ms * interval '1 millisecond' AS lifted_at,
                                     now() + x.until_ms * interval '1 millisecond' AS until) b
          ORDER BY x.i`,
        [cases.map((c) => c.liftedMs), cases.map((c) => c.untilMs)],
      );
      expect(rows).toHaveLength(cases.length);
      return cases
        .filter((_case, index) => {
          const row = rows[index];
          return typeScript({ liftedAt: row.lifted_at, until: row.until }, row.now.getTime()) !== row.active;
        })
        .map((c) => JSON.stringify(c));
    }

    it('agree on lifted and unlifted bans, permanent, over, ending now and running', async () => {
      expect(await disagreements(banIsActive)).toEqual([]);
    });

    it('disagree when only one form changes', async () => {
      const endsAfterNow: typeof banIsActive = (ban, now) =>
        ban.liftedAt === null && (ban.until === null || ban.until.getTime() >= now);
      expect(await disagreements(endsAfterNow)).toEqual([JSON.stringify({ liftedMs: null, untilMs: 0 })]);
      const liftedStillBans = (ban: string) => activeBan(ban).replace(`${ban}.lifted_at IS NULL AND `, '');
      expect(activeBan('b')).not.toBe(liftedStillBans('b'));
      expect(await disagreements(banIsActive, liftedStillBans)).toHaveLength(2 * 3);
    });

    /** Each function that writes the rule inline, and how many copies it holds. */
    const inlineCopies: Array<[name: string, copies: number]> = [
      ['rhythmc_upload_record', 1],
      ['rhythmc_player_login', 1],
      ['rhythmc_webhook_atp', 2],
    ];
    for (const [name, count] of inlineCopies) {
      it(`agree with ${count === 1 ? 'the copy' : `each of the ${count} copies`} inline in ${name}; and not when either changes alone`, async () => {
        const copies = inlineBanCopies(await definitionOf(name));
        expect(copies).toHaveLength(count);
        for (const copy of copies) {
          expect(await disagreements(banIsActive, copy)).toEqual([]);
          // The TypeScript form changed alone: a ban ending this instant still bans.
          const endsAfterNow: typeof banIsActive = (ban, now) =>
            ban.liftedAt === null && (ban.until === null || ban.until.getTime() >= now);
          expect(await disagreements(endsAfterNow, copy)).toEqual([JSON.stringify({ liftedMs: null, untilMs: 0 })]);
        }
        // The function changed alone (its first copy): a ban ending this instant still bans.
        const alias = name === 'rhythmc_webhook_atp' ? 'pb' : 'b';
        await withChangedFunction(name, `${alias}.until > now()`, `${alias}.until >= now()`, async () => {
          const changed = inlineBanCopies(await definitionOf(name));
          expect(await disagreements(banIsActive, changed[0])).toEqual([
            JSON.stringify({ liftedMs: null, untilMs: 0 }),
          ]);
        });
      });
    }
  });

  describe('a bound player token (auth/bound-token.rule.ts: boundTokenStatus, rhythmc_bound_player_session)', () => {
    const MIN = 60_000;
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    const hash = () => randomBytes(32).toString('hex');
    interface Case {
      state: string;
      tokenHash: string;
      uid: string;
      serverSessionId: string;
    }
    let cases: Case[] = [];
    /** The SQL form's answers in the last comparison. */
    let lastAnswers: string[] = [];

    /** Two servers with a session each; a player and a session per state; every state asked by its uid and another, from both servers. */
    beforeAll(async () => {
      const serverSessions: string[] = [];
      for (const name of ['twin-a', 'twin-b']) {
        const [server] = await sql<{ id: number }>(
          "INSERT INTO game_server (name, country) VALUES ($1, 'DE') RETURNING id",
          [name],
        );
        const [session] = await sql<{ id: string }>(
          `INSERT INTO server_session (server_id, plugin_sha, plugin_version, token_expires_at, token_hash)
           VALUES ($1, 'sha', 1, $2, $3) RETURNING id::text AS id`,
          [server.id, new Date(now.getTime() + 60 * MIN), hash()],
        );
        serverSessions.push(session.id);
      }
      const states: { state: string; expiresAt: Date; loggedOutAt: Date | null }[] = [
        { state: 'live', expiresAt: new Date(now.getTime() + 10 * MIN), loggedOutAt: null },
        { state: 'expiring now', expiresAt: now, loggedOutAt: null },
        { state: 'expired', expiresAt: new Date(now.getTime() - MIN), loggedOutAt: null },
        {
          state: 'logged out',
          expiresAt: new Date(now.getTime() + 10 * MIN),
          loggedOutAt: new Date(now.getTime() - MIN),
        },
      ];
      const stored: { state: string; tokenHash: string; uid: string }[] = [];
      for (const [index, state] of states.entries()) {
        const [player] = await sql<{ uid: string }>(
          'INSERT INTO player (username) VALUES ($1) RETURNING uid::text AS uid',
          [`twin_${index}`],
        );
        const tokenHash = hash();
        await sql(
          `INSERT INTO player_session (mode, uid, server_session_id, token_hash, token_expires_at, logged_out_at, logout_reason)
           VALUES ('ONLINE', $1, $2, $3, $4, $5, $6)`,
          [player.uid, serverSessions[0], tokenHash, state.expiresAt, state.loggedOutAt, state.loggedOutAt && 'logout'],
        );
        stored.push({ state: state.state, tokenHash, uid: player.uid });
      }
      stored.push({ state: 'unknown token', tokenHash: hash(), uid: stored[0].uid });
      const otherUid = String(Number(stored[0].uid) + 1_000_000);
      cases = stored.flatMap((session) =>
        [session.uid, otherUid].flatMap((uid) =>
          serverSessions.map((serverSessionId) => ({ ...session, uid, serverSessionId })),
        ),
      );
    });

    /** The cases where `typeScript` over the stored row and the database's rhythmc_bound_player_session differ. */
    async function disagreements(typeScript: typeof boundTokenStatus): Promise<string[]> {
      const rows = await sql<{
        status: string;
        uid: string | null;
        server_session_id: string | null;
        logged_out_at: Date | null;
        token_expires_at: Date | null;
      }>(
        `SELECT rhythmc_bound_player_session(x.token_hash, x.uid, x.server_session_id, $4) AS status,
                s.uid::text AS uid, s.server_session_id::text AS server_session_id, s.logged_out_at, s.token_expires_at
           FROM unnest($1::bpchar[], $2::bigint[], $3::uuid[]) WITH ORDINALITY AS x(token_hash, uid, server_session_id, i)
           LEFT JOIN player_session s ON s.token_hash = x.token_hash
          ORDER BY x.i`,
        [cases.map((c) => c.tokenHash), cases.map((c) => c.uid), cases.map((c) => c.serverSessionId), now],
      );
      expect(rows).toHaveLength(cases.length);
      lastAnswers = rows.map((row) => row.status);
      return cases
        .filter((c, index) => {
          const row = rows[index];
          const session: BoundTokenSession | null =
            row.uid === null
              ? null
              : {
                  uid: row.uid,
                  serverSessionId: row.server_session_id as string,
                  loggedOutAt: row.logged_out_at,
                  tokenExpiresAt: row.token_expires_at as Date,
                };
          return typeScript(session, c.uid, c.serverSessionId, now.getTime()) !== row.status;
        })
        .map((c) => `${c.state} ${c.uid} ${c.serverSessionId}`);
    }

    it('agree on live, expiring, expired, logged-out and unknown tokens, asked by any uid from any server', async () => {
      expect(cases).toHaveLength(5 * 2 * 2);
      expect(await disagreements(boundTokenStatus)).toEqual([]);
      // Every status is some case's answer.
      expect(new Set(lastAnswers)).toEqual(new Set(['ok', 'invalid_token', 'other_uid', 'other_server_session']));
    });

    it('disagree when only the TypeScript form changes', async () => {
      const anyServer: typeof boundTokenStatus = (session, uid, _server, at) =>
        boundTokenStatus(session, uid, session?.serverSessionId ?? '', at);
      expect(await disagreements(anyServer)).toHaveLength(1);
    });

    it('disagree when only the SQL form changes', async () => {
      const text = functionFiles().find((file) => file.name === 'rhythmc_bound_player_session')?.text ?? '';
      expect(text).toContain('v.token_expires_at <= p_now');
      await sql(text.replace('v.token_expires_at <= p_now', 'v.token_expires_at < p_now'));
      try {
        // The token expiring this instant: by every uid from every server.
        expect(await disagreements(boundTokenStatus)).toHaveLength(4);
      } finally {
        await sql(text);
      }
      expect(await disagreements(boundTokenStatus)).toEqual([]);
    });
  });

  describe('proof at login (player/session-proof.rule.ts: loginProves, v_proven of rhythmc_player_login)', () => {
    const MIN = 60_000;
    const hash = () => randomBytes(32).toString('hex');
    const modes: PlayerLoginMode[] = ['ONLINE', 'TOKEN', 'OFFLINE_REFRESH'];
    /** Every mode, for a player whose stored resume token was issued to a session with proof or without. */
    const cases = modes.flatMap((mode) => [false, true].map((resumeTokenProven) => ({ mode, resumeTokenProven })));
    let serverSessionId = '';
    let round = 0;

    beforeAll(async () => {
      const [server] = await sql<{ id: number }>(
        "INSERT INTO game_server (name, country) VALUES ('twin-proof', 'DE') RETURNING id",
      );
      const [session] = await sql<{ id: string }>(
        `INSERT INTO server_session (server_id, plugin_sha, plugin_version, token_expires_at, token_hash)
         VALUES ($1, 'sha', 1, now() + interval '1 hour', $2) RETURNING id::text AS id`,
        [server.id, hash()],
      );
      serverSessionId = session.id;
    });

    /**
     * The cases where `typeScript` and the proof rhythmc_player_login stored with the session it
     * opened (player_session.proven) differ: each case a fresh player (no live session, continueEnabled
     * on) with a resume token, logged in by its mode.
     */
    async function disagreements(typeScript: typeof loginProves): Promise<string[]> {
      round += 1;
      const now = new Date();
      const found: string[] = [];
      for (const [index, c] of cases.entries()) {
        const uuid = randomBytes(16).toString('hex');
        const username = `twin_proof_${round}_${index}`;
        const [player] = await sql<{ uid: string }>(
          'INSERT INTO player (username, uuid, continue_enabled) VALUES ($1, $2, true) RETURNING uid::text AS uid',
          [username, uuid],
        );
        const resumeHash = hash();
        await sql(
          'INSERT INTO player_resume_token (uid, token_hash, expires_at, issued_at, proven) VALUES ($1, $2, $3, $4, $5)',
          [player.uid, resumeHash, new Date(now.getTime() + 60 * MIN), now, c.resumeTokenProven],
        );
        const tokenHash = hash();
        const [answer] = await sql<{ status: string }>(
          'SELECT status FROM rhythmc_player_login($1, $2, $3, $4, $5, $6, $7, $8, 1, $9, $10, $11)',
          [
            c.mode,
            c.mode === 'TOKEN' ? player.uid : null,
            c.mode === 'ONLINE' ? uuid : null,
            c.mode === 'ONLINE' ? username : null,
            c.mode === 'OFFLINE_REFRESH' ? resumeHash : null,
            serverSessionId,
            tokenHash,
            new Date(now.getTime() + 10 * MIN),
            hash(),
            new Date(now.getTime() + 60 * MIN),
            now,
          ],
        );
        expect(answer.status).toBe('ok');
        const [opened] = await sql<{ proven: boolean }>('SELECT proven FROM player_session WHERE token_hash = $1', [
          tokenHash,
        ]);
        if (typeScript(c.mode, c.resumeTokenProven) !== opened.proven) found.push(JSON.stringify(c));
      }
      return found;
    }

    const fileText = () => functionFiles().find((file) => file.name === 'rhythmc_player_login')?.text ?? '';

    it('agree on every mode, with a resume token issued with proof or without', async () => {
      expect(cases).toHaveLength(6);
      expect(await disagreements(loginProves)).toEqual([]);
    });

    it('disagree when only the TypeScript form changes', async () => {
      // ONLINE taken as proof, as a provider's "this account exists" might be misread.
      const onlineProves: typeof loginProves = (mode, resumeTokenProven) =>
        mode === 'ONLINE' || loginProves(mode, resumeTokenProven);
      expect(await disagreements(onlineProves)).toEqual(
        [false, true].map((resumeTokenProven) => JSON.stringify({ mode: 'ONLINE', resumeTokenProven })),
      );
    });

    it('disagree when only the SQL form changes', async () => {
      expect(fileText()).toContain("v_proven boolean := p_mode = 'TOKEN';");
      await sql(
        fileText().replace("v_proven boolean := p_mode = 'TOKEN';", "v_proven boolean := p_mode <> 'OFFLINE_REFRESH';"),
      );
      try {
        expect(await disagreements(loginProves)).toEqual(
          [false, true].map((resumeTokenProven) => JSON.stringify({ mode: 'ONLINE', resumeTokenProven })),
        );
      } finally {
        await sql(fileText());
      }
      expect(await disagreements(loginProves)).toEqual([]);
    });
  });

  // Agreement itself on thousands of values: upload-one-statement.e2e-spec.ts ("rating arithmetic").
  describe('the play rating (upload/rating.ts: playRating, rhythmc_play_rating)', () => {
    const accs = [0, 50, 94.99999999999999, 95, 95.5, 96.5, 97.99999999999999, 98, 98.5, 99.99999999999999, 100];
    const cases = [0, 7.5, 14.7].flatMap((constant) => accs.map((acc) => ({ constant, acc })));
    const inMiddleBand = cases.filter((c) => c.acc > 95 && c.acc < 98).length;

    async function disagreements(typeScript: typeof playRating): Promise<string[]> {
      const rows = await sql<{ rating: number }>(
        `SELECT rhythmc_play_rating(x.c, x.a) AS rating
           FROM unnest($1::float8[], $2::float8[]) WITH ORDINALITY AS x(c, a, i) ORDER BY x.i`,
        [cases.map((c) => c.constant), cases.map((c) => c.acc)],
      );
      expect(rows).toHaveLength(cases.length);
      return cases
        .filter((c, index) => typeScript(c.constant, c.acc) !== rows[index].rating)
        .map((c) => JSON.stringify(c));
    }

    it('agree at every band edge, and disagree when one form changes alone', async () => {
      expect(await disagreements(playRating)).toEqual([]);
      const steeper: typeof playRating = (constant, acc) =>
        acc >= 95 && acc < 98 ? constant + (acc - 95) / 2 : playRating(constant, acc);
      expect(await disagreements(steeper)).toHaveLength(inMiddleBand);

      const text = functionFiles().find((file) => file.name === 'rhythmc_play_rating')?.text ?? '';
      expect(text).toContain('(p_acc - 95::float8) / 3::float8');
      await sql(text.replace('(p_acc - 95::float8) / 3::float8', '(p_acc - 95::float8) / 4::float8'));
      try {
        expect(await disagreements(playRating)).toHaveLength(inMiddleBand);
      } finally {
        await sql(text);
      }
      expect(await disagreements(playRating)).toEqual([]);
    });
  });
});
