import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { QueryResult } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import type { UploadSessionClock, UploadSessionRow } from '../auth/auth.types';
import { playerSessionByTokenHashCte, uploadSessionAccepted } from '../auth/upload-session.rule';
import { activeBanPredicate } from '../player/player.repository';
import { ATP_CHART_COUNT } from './rating';
import type { TrackPosition } from './upload.types';

/** A record as stored, every field of the upload plus where it came from. */
export interface NewPlayRecord {
  uid: string;
  levelId: number;
  timeMs: number;
  playerTimestampMs: number;
  acc: number;
  pass: boolean;
  fullCombo: boolean;
  allPerfect: boolean;
  isNewRecord: boolean;
  maxCombo: number;
  isRival: boolean;
  isWin: boolean;
  rivalUid: number;
  rivalAcc: number;
  /** tap, hold, dodge, look × perfect, great, miss. */
  counters: [number, number, number, number, number, number, number, number, number, number, number, number];
  playerArena: string;
  serverId: number;
  serverName: string;
  serverCountry: string;
  serverSessionId: string;
  /** The consistency checks it failed on arrival ([]: none). */
  flags: string[];
}

export interface StoredRecord {
  id: string;
  acc: number;
  pass: boolean;
  timeMs: number;
  /** When the service accepted it (epoch ms, floored): the time its best was first reached. */
  receivedMs: number;
  /** The consistency checks it failed ([]: none). */
  flags: string[];
  approved: boolean;
  voided: boolean;
}

/** The catalog's row of the uploaded level, as the upload reads it. */
export interface ChartRead {
  constant: number;
  placeholder: boolean;
  notes: number | null;
}

export interface BestRow extends TrackPosition {
  recordId: string;
  rating: number;
  version: number;
}

/**
 * Whether a stored record counts towards bests, ATP and ranks (docs/decisions.md "Score
 * integrity"): passed, no failed check or approved, not voided, on a chart that is not a
 * placeholder. COUNTED_RECORD is the same rule in SQL; keep the two together.
 */
export const recordCounts = (record: Pick<StoredRecord, 'pass' | 'flags' | 'approved' | 'voided'>, chart: Pick<ChartRead, 'placeholder'> | null): boolean =>
  record.pass && !record.voided && (record.flags.length === 0 || record.approved) && chart !== null && !chart.placeholder;

/** recordCounts in SQL, for a play_record `r` joined to its chart `c`. */
export const COUNTED_RECORD = (r: string, c: string) =>
  `(${r}.pass AND ${r}.voided_at IS NULL AND (cardinality(${r}.flags) = 0 OR ${r}.approved_at IS NOT NULL) AND NOT ${c}.placeholder)`;

/** Epoch milliseconds (floored) of a timestamptz expression: the unit of first_time_ms. */
const EPOCH_MS = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)::bigint`;

export interface LockedRating {
  atp: string;
  version: number;
}

/** What an upload reads of the player: rating row (atp null: no counted play), best on the chart, the other charts' top ratings, the chart's constant, the ban check. */
export interface StateRead {
  atp: string | null;
  version: number;
  best: BestRow | null;
  others: number[];
  /** null: the catalog has no row for the level yet. */
  chart: ChartRead | null;
  bans: BanCheck;
}

/** A recomputed best of one player on one chart. */
export interface ComputedBest extends TrackPosition {
  uid: string;
  levelId: number;
  recordId: string;
  constant: number;
}

export interface StoredBest extends BestRow {
  uid: string;
  levelId: number;
}

/** What an upload needs to know about bans: whether the player is banned, and which ban generation its snapshot saw. */
export interface BanCheck {
  selfBanned: boolean;
  /** rank_ban_generation at the statement's snapshot. */
  generation: number;
  /** The database's clock (epoch ms), against which bans run out. */
  dbNowMs: number;
}

interface BanCheckRow {
  self_banned: boolean;
  ban_generation: string;
  db_now: Date;
}

const toBanCheck = (row: BanCheckRow): BanCheck => ({ selfBanned: row.self_banned, generation: Number(row.ban_generation), dbNowMs: row.db_now.getTime() });

/** The banned players' rank keys: ratings, and bests on every chart; the earliest end of their bans. */
export interface BannedKeys {
  generation: number;
  /** Epoch ms of the first ban of the set to run out; null when all are permanent. */
  firstUntilMs: number | null;
  sites: Array<{ uid: string; atp: string }>;
  tracks: Array<{ uid: string; levelId: number; acc: number; firstTimeMs: number }>;
}

/** Site order: a row of player_rating `r` ahead of ($atp, $uid). */
const SITE_AHEAD = (atp: string, uid: string) => `(r.atp > ${atp} OR (r.atp = ${atp} AND r.uid < ${uid}))`;

/** Track order: a row of player_chart_best `c` ahead of ($acc, $time, $uid). */
const TRACK_AHEAD = (acc: string, time: string, uid: string) =>
  `(c.acc > ${acc} OR (c.acc = ${acc} AND (c.first_time_ms < ${time} OR (c.first_time_ms = ${time} AND c.uid < ${uid}))))`;

/** Select-list columns: whether $1 is under an active ban, the ban generation, and the database clock. */
const BAN_CHECK = `(SELECT ${activeBanPredicate('me_uid')} FROM (SELECT $1::bigint AS uid) AS me_uid) AS self_banned,
  (SELECT generation FROM rank_ban_generation WHERE id = 1) AS ban_generation,
  now() AS db_now`;

interface BestSqlRow {
  acc: number;
  first_time_ms: string;
  record_id: string;
  rating: number;
  version: string;
}

/**
 * The player's state ($1 uid, $2 level) in the statement's snapshot: CTE `me` holds the rating row
 * and the best on the chart (both may be missing); STATE_SELECT adds the chart constant (read from
 * the catalog's table, null when there is no row), the other charts' top ratings (ATP needs 30)
 * and the ban check.
 */
const STATE_CTES = `me AS (
    SELECT r.atp, r.version AS rating_version, b.acc, b.first_time_ms, b.record_id, b.rating, b.version,
           ch.difficulty_constant AS constant, ch.placeholder AS chart_placeholder, ch.notes AS chart_notes
      FROM (VALUES (1)) AS one
      LEFT JOIN player_rating r ON r.uid = $1
      LEFT JOIN player_chart_best b ON b.uid = $1 AND b.level_id = $2
      LEFT JOIN chart ch ON ch.level_id = $2
  )`;
const STATE_SELECT = `me.*,
  ARRAY(SELECT o.rating FROM player_chart_best o WHERE o.uid = $1 AND o.level_id <> $2 ORDER BY o.rating DESC LIMIT ${ATP_CHART_COUNT}) AS others,
  ${BAN_CHECK}`;

type StateSqlRow = Partial<BestSqlRow> &
  BanCheckRow & {
    atp: string | null;
    rating_version: string | null;
    constant: number | null;
    chart_placeholder: boolean | null;
    chart_notes: number | null;
    others: number[];
  };

const toStateRead = (row: StateSqlRow): StateRead => ({
  atp: row.atp,
  version: Number(row.rating_version ?? 0),
  best: row.record_id ? toBest(row as BestSqlRow) : null,
  others: row.others,
  chart: row.constant === null ? null : { constant: row.constant, placeholder: row.chart_placeholder === true, notes: row.chart_notes },
  bans: toBanCheck(row),
});

interface RecordSqlRow {
  id: string;
  acc: number;
  pass: boolean;
  time_ms: string;
  received_ms: string;
  flags: string[];
  approved: boolean;
  voided: boolean;
}

/** The select list of a play_record `r` as a StoredRecord. */
const RECORD_COLUMNS = `r.id, r.acc, r.pass, r.time_ms, ${EPOCH_MS('r.received_at')} AS received_ms, r.flags,
  r.approved_at IS NOT NULL AS approved, r.voided_at IS NOT NULL AS voided`;

const toStoredRecord = (row: RecordSqlRow): StoredRecord => ({
  id: row.id,
  acc: row.acc,
  pass: row.pass,
  timeMs: Number(row.time_ms),
  receivedMs: Number(row.received_ms),
  flags: row.flags,
  approved: row.approved,
  voided: row.voided,
});

const toBest = (row: BestSqlRow): BestRow => ({
  acc: row.acc,
  firstTimeMs: Number(row.first_time_ms),
  recordId: row.record_id,
  rating: row.rating,
  version: Number(row.version),
});

/**
 * Score records, per-chart bests and ratings. Reads the bans of the player module (through its
 * predicate) and the chart constants of the catalog for the recompute; writes only its own tables.
 */
@Injectable()
export class UploadRepository {
  /** The embedded database shares one session across connections: named statements would collide there. */
  private readonly namedStatements: boolean;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.namedStatements = config.databaseUrl !== null;
  }

  private manager(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  /**
   * Runs one of the upload's statements. On PostgreSQL it is a named prepared statement on the
   * transaction's connection: planned once per connection instead of at every upload (planning
   * these statements costs more than running them: 0.4–1.5 ms against 0.1 ms, measured with
   * EXPLAIN ANALYZE on the benchmark data). TypeORM's query() has no named statements, hence the
   * pg client of the query runner. The embedded database runs them unnamed.
   */
  private async hot<T>(manager: EntityManager, name: string, text: string, params: unknown[]): Promise<T[]> {
    const connection = (manager.queryRunner as unknown as { databaseConnection?: { query?: unknown } } | undefined)?.databaseConnection;
    if (!this.namedStatements || typeof connection?.query !== 'function') return manager.query<T[]>(text, params);
    const query = connection.query as (config: { name: string; text: string; values: unknown[] }) => Promise<QueryResult>;
    const result = await query.call(connection, { name: `upload_${name}`, text, values: params });
    return result.rows as T[];
  }

  /**
   * One statement for the common upload: reads the session of the player token (the caller judges
   * it with AuthService.checkUploadSession; the record is inserted only under the same conditions),
   * stores the record unless the same one (player, level, time) is stored, locks the player's
   * rating row, and reads the player's state: rating, best on the chart, the other charts' top
   * ratings, the chart's constant, and the ban check.
   *
   * The state is read in the statement's snapshot, the lock returns the row's latest committed
   * version: when another upload of the player committed while this one waited for the lock, the
   * two versions differ (every change of a player's bests bumps the version under that lock) and
   * the caller reads the state again with readLockedState.
   */
  async insertRecordAndReadState(
    record: NewPlayRecord,
    playerTokenHash: string,
    clock: UploadSessionClock,
    manager: EntityManager,
  ): Promise<{ session: UploadSessionRow | null; inserted: { id: string; receivedMs: number } | null; locked: LockedRating | null; state: StateRead }> {
    const rows = await this.hot<
      StateSqlRow & {
        id: string | null;
        received_ms: string | null;
        locked_atp: string | null;
        locked_version: string | null;
        s_id: string | null;
        s_uid: string | null;
        s_server_session_id: string | null;
        s_token_expires_at: Date | null;
        s_renewed_at: Date | null;
        s_logged_out_at: Date | null;
      }
    >(
      manager,
      'insert_and_read',
      `WITH ${playerSessionByTokenHashCte('sess', '$32')},
       locked AS (SELECT atp, version FROM player_rating WHERE uid = $1 FOR UPDATE),
       inserted AS (
         INSERT INTO play_record (uid, level_id, time_ms, player_timestamp_ms, acc, pass, full_combo, all_perfect, is_new_record,
           max_combo, is_rival, is_win, rival_uid, rival_acc,
           tap_perfect, tap_great, tap_miss, hold_perfect, hold_great, hold_miss,
           dodge_perfect, dodge_great, dodge_miss, look_perfect, look_great, look_miss,
           player_arena, server_id, server_name, server_country, server_session_id, player_session_id, flags)
         -- Selecting from "locked" takes the lock before the insert, in every plan: two copies of
         -- one record then queue on the rating row instead of deadlocking on it and the record key.
         -- Nothing is inserted unless the player token's session is one the upload accepts.
         SELECT $1::bigint, $2::int, $3::bigint, $4::bigint, $5::float8, $6::boolean, $7::boolean, $8::boolean, $9::boolean,
           $10::int, $11::boolean, $12::boolean, $13::bigint, $14::float8,
           $15::int, $16::int, $17::int, $18::int, $19::int, $20::int, $21::int, $22::int, $23::int, $24::int, $25::int, $26::int,
           $27::varchar, $28::int, $29::varchar, $30::varchar, $31::uuid, sess.id, $35::text[]
           FROM sess, (SELECT count(*) FROM locked) AS after_lock
          WHERE ${uploadSessionAccepted('sess', { uid: '$1::bigint', serverSession: '$31::uuid', now: '$33::timestamptz', liveSince: '$34::timestamptz' })}
         ON CONFLICT (uid, level_id, time_ms) DO NOTHING
         RETURNING id, ${EPOCH_MS('received_at')} AS received_ms
       ), ${STATE_CTES}
       SELECT (SELECT id FROM inserted) AS id, (SELECT received_ms FROM inserted) AS received_ms, (SELECT atp FROM locked) AS locked_atp, (SELECT version FROM locked) AS locked_version,
         s.id AS s_id, s.uid AS s_uid, s.server_session_id AS s_server_session_id, s.token_expires_at AS s_token_expires_at,
         s.renewed_at AS s_renewed_at, s.logged_out_at AS s_logged_out_at, ${STATE_SELECT}
         FROM me LEFT JOIN sess s ON true`,
      [
        record.uid,
        record.levelId,
        record.timeMs,
        record.playerTimestampMs,
        record.acc,
        record.pass,
        record.fullCombo,
        record.allPerfect,
        record.isNewRecord,
        record.maxCombo,
        record.isRival,
        record.isWin,
        record.rivalUid,
        record.rivalAcc,
        ...record.counters,
        record.playerArena,
        record.serverId,
        record.serverName,
        record.serverCountry,
        record.serverSessionId,
        playerTokenHash,
        clock.now,
        clock.liveSince,
        record.flags,
      ],
    );
    const row = rows[0];
    return {
      session:
        row.s_id === null
          ? null
          : {
              id: row.s_id,
              uid: row.s_uid as string,
              serverSessionId: row.s_server_session_id as string,
              tokenExpiresAt: row.s_token_expires_at as Date,
              renewedAt: row.s_renewed_at as Date,
              loggedOutAt: row.s_logged_out_at,
            },
      inserted: row.id === null ? null : { id: row.id, receivedMs: Number(row.received_ms) },
      locked: row.locked_version === null ? null : { atp: row.locked_atp as string, version: Number(row.locked_version) },
      state: toStateRead(row),
    };
  }

  /** The player's state as insertRecordAndReadState reads it, in a statement of its own (call with the rating row locked). */
  async readLockedState(uid: string, levelId: number, manager: EntityManager): Promise<StateRead> {
    const rows = await this.hot<StateSqlRow>(manager, 'read_state', `WITH ${STATE_CTES} SELECT ${STATE_SELECT} FROM me`, [uid, levelId]);
    return toStateRead(rows[0]);
  }

  async findRecord(uid: string, levelId: number, timeMs: number, manager: EntityManager): Promise<StoredRecord | null> {
    const rows = await manager.query<RecordSqlRow[]>(`SELECT ${RECORD_COLUMNS} FROM play_record r WHERE r.uid = $1 AND r.level_id = $2 AND r.time_ms = $3`, [
      uid,
      levelId,
      timeMs,
    ]);
    return rows.length > 0 ? toStoredRecord(rows[0]) : null;
  }

  /** Replaces the failed checks of a record this transaction inserted (the note count is known only after the insert). */
  async setFlags(id: string, flags: string[], manager: EntityManager): Promise<void> {
    await manager.query('UPDATE play_record SET flags = $2::text[] WHERE id = $1', [id, flags]);
  }

  /** Creates the rating row of a player's first counted play (ATP 0, version 0) and locks it. */
  async createAndLockRating(uid: string, manager: EntityManager): Promise<LockedRating> {
    await manager.query('INSERT INTO player_rating (uid, atp, version) VALUES ($1, 0, 0) ON CONFLICT (uid) DO NOTHING', [uid]);
    const rows = await manager.query<Array<{ atp: string; version: string }>>('SELECT atp, version FROM player_rating WHERE uid = $1 FOR UPDATE', [uid]);
    return { atp: rows[0].atp, version: Number(rows[0].version) };
  }

  /**
   * Writes the player's new best on the chart and the new ATP, one statement; both take the next
   * version of rank_version_seq, drawn under the rating row's lock (so a player's versions grow in
   * commit order). Returns that version.
   */
  async writeBestAndRating(uid: string, levelId: number, best: Omit<BestRow, 'version'>, atp: string, manager: EntityManager): Promise<number> {
    const rows = await this.hot<{ version: string }>(
      manager,
      'write_best',
      `WITH v AS (SELECT nextval('rank_version_seq') AS version),
       best AS (
         INSERT INTO player_chart_best (uid, level_id, acc, first_time_ms, record_id, rating, version, updated_at)
         SELECT $1, $2, $3, $4, $5, $6, v.version, now() FROM v
         ON CONFLICT (uid, level_id) DO UPDATE
           SET acc = EXCLUDED.acc, first_time_ms = EXCLUDED.first_time_ms, record_id = EXCLUDED.record_id,
               rating = EXCLUDED.rating, version = EXCLUDED.version, updated_at = now()
       )
       UPDATE player_rating SET atp = $7, version = (SELECT version FROM v), updated_at = now() WHERE uid = $1 RETURNING version`,
      [uid, levelId, best.acc, best.firstTimeMs, best.recordId, best.rating, atp],
    );
    return Number(rows[0].version);
  }

  /** `count` fresh rating versions (recompute batches draw them after locking their players' rows). */
  async nextVersions(count: number, manager: EntityManager): Promise<number[]> {
    if (count === 0) return [];
    const rows = await manager.query<Array<{ version: string }>>("SELECT nextval('rank_version_seq') AS version FROM generate_series(1, $1)", [count]);
    return rows.map((row) => Number(row.version));
  }

  /** Whether the player is under an active ban, with the ban generation and the database clock (rank reads outside an upload). */
  async banCheck(uid: string): Promise<BanCheck> {
    const rows = await this.manager().query<BanCheckRow[]>(`SELECT ${BAN_CHECK}`, [uid]);
    return toBanCheck(rows[0]);
  }

  /** Marks every instance's view of the banned players' rank keys stale (a banned player's keys changed). */
  async bumpBanGeneration(manager: EntityManager): Promise<void> {
    await manager.query('UPDATE rank_ban_generation SET generation = generation + 1 WHERE id = 1');
  }

  /** The players among `uids` under an active ban. */
  async activelyBanned(uids: string[], manager: EntityManager): Promise<string[]> {
    if (uids.length === 0) return [];
    const rows = await manager.query<Array<{ uid: string }>>(
      `SELECT x.uid FROM unnest($1::bigint[]) AS x(uid) WHERE ${activeBanPredicate('x')}`,
      [uids],
    );
    return rows.map((row) => row.uid);
  }

  /**
   * The rank keys of every player under an active ban, in one statement (one snapshot): their
   * ATP, their bests, the ban generation, and when the first of those bans runs out. O(bans
   * and their charts); read again only when the generation moves or a ban runs out.
   */
  async bannedKeys(): Promise<BannedKeys> {
    const rows = await this.manager().query<
      Array<{ generation: string; first_until: Date | null; sites: Array<{ uid: string; atp: string }> | null; tracks: Array<{ uid: string; level_id: number; acc: number; first_time_ms: string }> | null }>
    >(
      `WITH banned AS (
         SELECT u.uid, u.until FROM player_ban u WHERE u.lifted_at IS NULL AND ${activeBanPredicate('u')}
       )
       SELECT (SELECT generation FROM rank_ban_generation WHERE id = 1) AS generation,
              (SELECT min(until) FROM banned) AS first_until,
              (SELECT json_agg(json_build_object('uid', r.uid::text, 'atp', r.atp::text)) FROM banned x JOIN player_rating r ON r.uid = x.uid) AS sites,
              (SELECT json_agg(json_build_object('uid', c.uid::text, 'level_id', c.level_id, 'acc', c.acc, 'first_time_ms', c.first_time_ms::text))
                 FROM banned x JOIN player_chart_best c ON c.uid = x.uid) AS tracks`,
    );
    const row = rows[0];
    return {
      generation: Number(row.generation),
      firstUntilMs: row.first_until ? row.first_until.getTime() : null,
      sites: row.sites ?? [],
      tracks: (row.tracks ?? []).map((t) => ({ uid: t.uid, levelId: t.level_id, acc: t.acc, firstTimeMs: Number(t.first_time_ms) })),
    };
  }

  /**
   * Unbanned players ahead, counted in SQL: exact, but it walks every row ahead (O(rank)). Used
   * when the rank index cannot answer, and by the tests as the reference.
   */
  async unbannedAhead(uid: string, atp: string | null, levelId: number, best: TrackPosition | null): Promise<{ siteAhead: number; trackAhead: number }> {
    const rows = await this.manager().query<Array<{ site_ahead: number; track_ahead: number }>>(
      `SELECT (SELECT count(*) FROM player_rating r
                WHERE $2::numeric IS NOT NULL AND ${SITE_AHEAD('$2::numeric', '$1::bigint')} AND NOT ${activeBanPredicate('r')})::int AS site_ahead,
              (SELECT count(*) FROM player_chart_best c
                WHERE c.level_id = $3 AND $4::float8 IS NOT NULL AND ${TRACK_AHEAD('$4::float8', '$5::bigint', '$1::bigint')}
                  AND NOT ${activeBanPredicate('c')})::int AS track_ahead`,
      [uid, atp, levelId, best?.acc ?? null, best?.firstTimeMs ?? null],
    );
    return { siteAhead: rows[0].site_ahead, trackAhead: rows[0].track_ahead };
  }

  /** One page of ratings by uid (index loading). */
  async pageRatings(afterUid: string, limit: number): Promise<Array<{ uid: string; atp: string; version: number }>> {
    const rows = await this.manager().query<Array<{ uid: string; atp: string; version: string }>>(
      'SELECT uid, atp, version FROM player_rating WHERE uid > $1 ORDER BY uid LIMIT $2',
      [afterUid, limit],
    );
    return rows.map((row) => ({ uid: row.uid, atp: row.atp, version: Number(row.version) }));
  }

  /** One page of bests by (uid, level) (index loading). */
  async pageBests(afterUid: string, afterLevel: number, limit: number): Promise<StoredBest[]> {
    const rows = await this.manager().query<Array<BestSqlRow & { uid: string; level_id: number }>>(
      `SELECT uid, level_id, acc, first_time_ms, record_id, rating, version FROM player_chart_best
        WHERE (uid, level_id) > ($1::bigint, $2::int) ORDER BY uid, level_id LIMIT $3`,
      [afterUid, afterLevel, limit],
    );
    return rows.map((row) => ({ uid: row.uid, levelId: row.level_id, ...toBest(row) }));
  }

  /** The next players (by uid) that have stored records, for the recompute batches. */
  async nextPlayersWithRecords(afterUid: string, limit: number): Promise<string[]> {
    const rows = await this.manager().query<Array<{ uid: string }>>(
      'SELECT DISTINCT uid FROM play_record WHERE uid > $1 ORDER BY uid LIMIT $2',
      [afterUid, limit],
    );
    return rows.map((row) => row.uid);
  }

  /** Locks the rating rows of the players (uid order, so batches and uploads never deadlock), creating missing ones. */
  async lockRatings(uids: string[], manager: EntityManager): Promise<Map<string, { atp: string; version: number }>> {
    await manager.query(
      `INSERT INTO player_rating (uid, atp, version) SELECT u, 0, 0 FROM unnest($1::bigint[]) AS u ORDER BY u ON CONFLICT (uid) DO NOTHING`,
      [uids],
    );
    const rows = await manager.query<Array<{ uid: string; atp: string; version: string }>>(
      'SELECT uid, atp, version FROM player_rating WHERE uid = ANY($1::bigint[]) ORDER BY uid FOR UPDATE',
      [uids],
    );
    return new Map(rows.map((row) => [row.uid, { atp: row.atp, version: Number(row.version) }]));
  }

  /**
   * The best counted play of each of the players on each chart, from the stored records: highest
   * acc, then received first, then lowest record id; with the chart's current constant.
   */
  async computeBests(uids: string[], manager: EntityManager): Promise<ComputedBest[]> {
    const rows = await manager.query<Array<{ uid: string; level_id: number; acc: number; first_ms: string; id: string; constant: number }>>(
      `SELECT DISTINCT ON (r.uid, r.level_id) r.uid, r.level_id, r.acc, ${EPOCH_MS('r.received_at')} AS first_ms, r.id, c.difficulty_constant AS constant
         FROM play_record r
         JOIN chart c ON c.level_id = r.level_id
        WHERE r.uid = ANY($1::bigint[]) AND ${COUNTED_RECORD('r', 'c')}
        ORDER BY r.uid, r.level_id, r.acc DESC, r.received_at ASC, r.id ASC`,
      [uids],
    );
    return rows.map((row) => ({
      uid: row.uid,
      levelId: row.level_id,
      acc: row.acc,
      firstTimeMs: Number(row.first_ms),
      recordId: row.id,
      constant: row.constant,
    }));
  }

  async readBests(uids: string[], manager: EntityManager): Promise<StoredBest[]> {
    const rows = await manager.query<Array<BestSqlRow & { uid: string; level_id: number }>>(
      'SELECT uid, level_id, acc, first_time_ms, record_id, rating, version FROM player_chart_best WHERE uid = ANY($1::bigint[])',
      [uids],
    );
    return rows.map((row) => ({ uid: row.uid, levelId: row.level_id, ...toBest(row) }));
  }

  /** Replaces the bests of the listed (uid, level) keys and deletes `removed`, in bulk. */
  async replaceBests(upserts: StoredBest[], removed: Array<{ uid: string; levelId: number }>, manager: EntityManager): Promise<void> {
    if (upserts.length > 0) {
      await manager.query(
        `INSERT INTO player_chart_best (uid, level_id, acc, first_time_ms, record_id, rating, version, updated_at)
         SELECT t.uid, t.level_id, t.acc, t.first_time_ms, t.record_id, t.rating, t.version, now()
           FROM jsonb_to_recordset($1::jsonb)
             AS t(uid bigint, level_id int, acc float8, first_time_ms bigint, record_id bigint, rating float8, version bigint)
         ON CONFLICT (uid, level_id) DO UPDATE
           SET acc = EXCLUDED.acc, first_time_ms = EXCLUDED.first_time_ms, record_id = EXCLUDED.record_id,
               rating = EXCLUDED.rating, version = EXCLUDED.version, updated_at = now()`,
        [
          JSON.stringify(
            upserts.map((b) => ({
              uid: b.uid,
              level_id: b.levelId,
              acc: b.acc,
              first_time_ms: b.firstTimeMs,
              record_id: b.recordId,
              rating: b.rating,
              version: b.version,
            })),
          ),
        ],
      );
    }
    if (removed.length > 0) {
      await manager.query(
        `DELETE FROM player_chart_best b USING jsonb_to_recordset($1::jsonb) AS t(uid bigint, level_id int)
          WHERE b.uid = t.uid AND b.level_id = t.level_id`,
        [JSON.stringify(removed.map((key) => ({ uid: key.uid, level_id: key.levelId })))],
      );
    }
  }

  /** Sets ATP and version of the listed players and deletes the rating rows of `unranked` (no counted play left). */
  async replaceRatings(updates: Array<{ uid: string; atp: string; version: number }>, unranked: string[], manager: EntityManager): Promise<void> {
    if (updates.length > 0) {
      await manager.query(
        `UPDATE player_rating r SET atp = t.atp, version = t.version, updated_at = now()
           FROM jsonb_to_recordset($1::jsonb) AS t(uid bigint, atp numeric, version bigint)
          WHERE r.uid = t.uid`,
        [JSON.stringify(updates)],
      );
    }
    if (unranked.length > 0) {
      await manager.query('DELETE FROM player_rating WHERE uid = ANY($1::bigint[])', [unranked]);
    }
  }
}
