import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { UploadSessionClock } from '../auth/auth.types';
import { playerSessionByTokenHashCte, uploadSessionRefusal } from '../auth/upload-session.rule';
import { PreparedQueries } from '../database/prepared-queries';
import { BatchableStatement, compareUids, StatementBatcher } from '../database/statement-batcher';
import { ATP_CHART_COUNT } from './rating';
import { BAN_CHECK, BanCheckRow, BestSqlRow, EPOCH_MS, toBanCheck, toBest } from '../ranking/rank-sql';
import type {
  LockedRating,
  NewPlayRecord,
  OneStatementUpload,
  StateRead,
  StoredRecord,
  UploadRefusal,
} from './upload.types';

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

/** The best's columns: all of them, or none (no best on the chart yet). */
type BestColumns = BestSqlRow | { [column in keyof BestSqlRow]: null };

type StateSqlRow = BestColumns &
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
  best: row.record_id === null ? null : toBest(row),
  others: row.others,
  chart:
    row.constant === null
      ? null
      : { constant: row.constant, placeholder: row.chart_placeholder === true, notes: row.chart_notes },
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

/**
 * The record's fields in the order of both upload statements' first parameters: the play, the
 * twelve counters (one parameter each, or one int[] for rhythmc_upload_record), where it came from.
 */
function recordFields(record: NewPlayRecord, counters: 'spread' | 'array'): unknown[] {
  return [
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
    ...(counters === 'spread' ? record.counters : [record.counters]),
    record.playerArena,
    record.serverId,
    record.serverName,
    record.serverCountry,
    record.serverSessionId,
  ];
}

/*
 * rhythmc_upload_record's row (RETURNS TABLE in sql/rhythmc_upload_record.sql), by outcome: the columns
 * each fills, the others null. The one place its untyped row meets a type.
 */
/** 'stored': the record, its chart, the ban check, the player's state before the play. */
type UploadStoredRow = {
  outcome: 'stored';
  refusal: null;
  new_record_id: string;
  new_received_ms: string;
  chart_constant: number;
  chart_placeholder: boolean | null;
  chart_notes: number | null;
  prev_version: string | null;
  prev_atp: string | null;
  self_banned: boolean;
  ban_generation: string;
  db_now: Date;
} & (
  | { prev_record_id: null }
  | {
      prev_record_id: string;
      prev_acc: number;
      prev_first_time_ms: string;
      prev_rating: number;
      prev_best_version: string;
    }
) &
  // The best and ATP the play wrote, when it counted and beat the best.
  ({ new_version: null } | { new_version: string; new_atp_e4: string; new_rating: number });
/** A refused session (or an erased uid): the reason, which the service words. Nothing written. */
interface UploadRefusedRow {
  outcome: 'refused';
  refusal: UploadRefusal;
}
/** Any other outcome wrote nothing: the transactional path takes the upload. */
interface UploadNotStoredRow {
  outcome: 'chart' | 'notes' | 'duplicate';
  refusal: null;
}
type UploadRecordSqlRow = UploadStoredRow | UploadRefusedRow | UploadNotStoredRow;

/** rhythmc_upload_record's row as the service reads it. */
function toOneStatementUpload(row: UploadRecordSqlRow): OneStatementUpload {
  if (row.outcome === 'refused') return { outcome: 'refused', refusal: row.refusal };
  if (row.outcome !== 'stored') return { outcome: row.outcome };
  return {
    outcome: 'stored',
    record: { id: row.new_record_id, receivedMs: Number(row.new_received_ms) },
    chart: {
      constant: row.chart_constant,
      placeholder: row.chart_placeholder === true,
      notes: row.chart_notes,
    },
    previous: {
      version: Number(row.prev_version ?? 0),
      atp: row.prev_atp,
      best:
        row.prev_record_id === null
          ? null
          : toBest({
              acc: row.prev_acc,
              first_time_ms: row.prev_first_time_ms,
              record_id: row.prev_record_id,
              rating: row.prev_rating,
              version: row.prev_best_version,
            }),
    },
    written:
      row.new_version === null
        ? null
        : { version: Number(row.new_version), atpE4: Number(row.new_atp_e4), rating: row.new_rating },
    bans: toBanCheck(row),
  };
}

/** The transactional statement's parameters of the upload-session rule. */
const SESSION_PARAMS = {
  uid: '$1::bigint',
  serverSession: '$31::uuid',
  now: '$33::timestamptz',
  liveSince: '$34::timestamptz',
};

interface UploadCall {
  record: NewPlayRecord;
  playerTokenHash: string;
  clock: UploadSessionClock;
  judged: number | null;
  /** The instant the play counts at for the periods of the boards (Clock.now()). */
  periodAt: Date;
}

/**
 * `rhythmc_upload_record`, alone or for many uploads in one statement (StatementBatcher), by uid (the
 * order their rating rows are locked in). A batch carries each call's counters and flags as JSON
 * text (StatementBatcher): twelve integers become an int[] literal by their brackets, the flags
 * are unpacked in order.
 */
const UPLOAD_RECORD: BatchableStatement<UploadCall, UploadRecordSqlRow> = {
  name: 'upload_record',
  single: `SELECT * FROM rhythmc_upload_record($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::int[],
         $16, $17, $18, $19, $20, $21, $22, $23, $24::text[], $25, $26)`,
  params: (c) => [
    ...recordFields(c.record, 'array'),
    c.playerTokenHash,
    c.clock.now,
    c.clock.liveSince,
    c.record.flags,
    c.judged,
    c.periodAt,
  ],
  batch: `SELECT a.i, r.*
    FROM unnest($1::bigint[], $2::integer[], $3::bigint[], $4::bigint[], $5::float8[], $6::boolean[], $7::boolean[],
                $8::boolean[], $9::boolean[], $10::integer[], $11::boolean[], $12::boolean[], $13::bigint[], $14::float8[],
                $15::text[], $16::varchar[], $17::integer[], $18::varchar[], $19::varchar[], $20::uuid[], $21::bpchar[],
                $22::timestamptz[], $23::timestamptz[], $24::text[], $25::bigint[], $26::timestamptz[])
         WITH ORDINALITY AS a(uid, level_id, time_ms, player_timestamp_ms, acc, pass, full_combo, all_perfect,
                              is_new_record, max_combo, is_rival, is_win, rival_uid, rival_acc, counters, player_arena,
                              server_id, server_name, server_country, server_session_id, token_hash, now, live_since,
                              flags, judged, period_at, i)
   CROSS JOIN LATERAL rhythmc_upload_record(a.uid, a.level_id, a.time_ms, a.player_timestamp_ms, a.acc, a.pass,
         a.full_combo, a.all_perfect, a.is_new_record, a.max_combo, a.is_rival, a.is_win, a.rival_uid, a.rival_acc,
         translate(a.counters, '[]', '{}')::int[], a.player_arena, a.server_id, a.server_name, a.server_country, a.server_session_id,
         a.token_hash, a.now, a.live_since, ARRAY(SELECT f.v FROM jsonb_array_elements_text(a.flags::jsonb) WITH ORDINALITY AS f(v, n) ORDER BY f.n),
         a.judged, a.period_at) r
   ORDER BY a.i`,
  order: (a, b) => compareUids(a.record.uid, b.record.uid),
};

/**
 * Score records: the upload's one statement (rhythmc_upload_record: session check, insert, rating-row
 * lock, best and ATP); for the transactional path its first statement (session read, insert,
 * rating-row lock, the player's state), the state read again under the lock, a stored record, and
 * a record's failed checks.
 */
@Injectable()
export class PlayRecordRepository {
  constructor(
    private readonly statements: PreparedQueries,
    private readonly batcher: StatementBatcher,
  ) {}

  /**
   * The transactional path's first statement: judges the session of the player token (the
   * upload-session rule, uploadSessionRefusal: the reason it is refused, or 'erased' for an erased
   * player's uid; null: accepted), stores the record unless the session is refused or the same
   * record (player, level, time) is stored, locks the player's
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
  ): Promise<{
    refusal: UploadRefusal | null;
    inserted: { id: string; receivedMs: number } | null;
    locked: LockedRating | null;
    state: StateRead;
  }> {
    const rows = await this.statements.runIn<
      StateSqlRow & {
        id: string | null;
        received_ms: string | null;
        refusal: UploadRefusal | null;
      } & ({ locked_version: null } | { locked_version: string; locked_atp: string })
    >(
      manager,
      'upload_insert_and_read',
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
          WHERE ${uploadSessionRefusal('sess', SESSION_PARAMS)} IS NULL
         ON CONFLICT (uid, level_id, time_ms) DO NOTHING
         RETURNING id, ${EPOCH_MS('received_at')} AS received_ms
       ), ${STATE_CTES}
       SELECT (SELECT id FROM inserted) AS id, (SELECT received_ms FROM inserted) AS received_ms, (SELECT atp FROM locked) AS locked_atp, (SELECT version FROM locked) AS locked_version,
         CASE WHEN judged.refusal IS NOT NULL AND EXISTS (SELECT 1 FROM player_erasure e WHERE e.uid = $1::bigint)
              THEN 'erased' ELSE judged.refusal END AS refusal, ${STATE_SELECT}
         FROM me LEFT JOIN sess s ON true CROSS JOIN LATERAL (SELECT ${uploadSessionRefusal('s', SESSION_PARAMS)} AS refusal) AS judged`,
      [...recordFields(record, 'spread'), playerTokenHash, clock.now, clock.liveSince, record.flags],
    );
    const row = rows[0];
    return {
      refusal: row.refusal,
      inserted: row.id === null ? null : { id: row.id, receivedMs: Number(row.received_ms) },
      locked: row.locked_version === null ? null : { atp: row.locked_atp, version: Number(row.locked_version) },
      state: toStateRead(row),
    };
  }

  /**
   * The common upload in one statement (rhythmc_upload_record, sql/rhythmc_upload_record.sql):
   * the session check, the record, and for a counted play that beats the best the best and ATP,
   * with the locks and in the order of the transactional path. `judged`: the notes the record
   * judged when the noteCount check is on, else null. Any outcome but 'stored' wrote nothing;
   * 'refused' carries the reason.
   */
  async uploadInOneStatement(
    record: NewPlayRecord,
    playerTokenHash: string,
    clock: UploadSessionClock,
    judged: number | null,
    periodAt: Date,
  ): Promise<OneStatementUpload> {
    const row = await this.batcher.run(UPLOAD_RECORD, { record, playerTokenHash, clock, judged, periodAt });
    return toOneStatementUpload(row);
  }

  /** The player's state as insertRecordAndReadState reads it, in a statement of its own (call with the rating row locked). */
  async readLockedState(uid: string, levelId: number, manager: EntityManager): Promise<StateRead> {
    const rows = await this.statements.runIn<StateSqlRow>(
      manager,
      'upload_read_state',
      `WITH ${STATE_CTES} SELECT ${STATE_SELECT} FROM me`,
      [uid, levelId],
    );
    return toStateRead(rows[0]);
  }

  /** Whether the uid is an erased player's (player_erasure, the privacy module's tombstone; read only). */
  async isErased(uid: string, manager: EntityManager): Promise<boolean> {
    const rows = await manager.query<unknown[]>('SELECT 1 FROM player_erasure WHERE uid = $1::bigint', [uid]);
    return rows.length > 0;
  }

  async findRecord(uid: string, levelId: number, timeMs: number, manager: EntityManager): Promise<StoredRecord | null> {
    const rows = await manager.query<RecordSqlRow[]>(
      `SELECT ${RECORD_COLUMNS} FROM play_record r WHERE r.uid = $1 AND r.level_id = $2 AND r.time_ms = $3`,
      [uid, levelId, timeMs],
    );
    return rows.length > 0 ? toStoredRecord(rows[0]) : null;
  }

  /**
   * The transactional path's period step (call with the rating row locked, for a counted play):
   * rhythmc_count_period_play, the function the one statement calls, so the two paths share it.
   */
  async countForPeriods(
    record: { uid: string; levelId: number; acc: number; receivedMs: number; id: string },
    constant: number,
    periodAt: Date,
    manager: EntityManager,
  ): Promise<void> {
    await manager.query('SELECT rhythmc_count_period_play($1, $2, $3, $4, $5, $6, $7)', [
      record.uid,
      record.levelId,
      record.acc,
      record.receivedMs,
      record.id,
      constant,
      periodAt,
    ]);
  }

  /** Replaces the failed checks of a record this transaction inserted (the note count is known only after the insert). */
  async setFlags(id: string, flags: string[], manager: EntityManager): Promise<void> {
    await manager.query('UPDATE play_record SET flags = $2::text[] WHERE id = $1', [id, flags]);
  }
}
