import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PreparedQueries } from '../../database/prepared-queries';
import { ReadQueries } from '../../database/read-queries';
import { activeBanPredicate } from '../../player/active-ban.rule';
import { COUNTED_RECORD } from '../counted-record.rule';
import { historyBucket, historySlot } from './rating-history-layout';

/**
 * The advisory lock key of the snapshot (pg_advisory_xact_lock: two instances take a day one after
 * the other; the second finds it taken). Distinct from the migration lock.
 */
export const SNAPSHOT_LOCK_KEY = 7_311_744_202;

/**
 * Day $1's snapshot, for the plays received in [$2, $3): every player with a counted play
 * (COUNTED_RECORD) received then, with that day's count of them, the ATP now (in ten-thousandths)
 * and the site rank now (decisions.md §5: ATP desc, uid asc among players not under an active
 * ban; 0 for a banned player, who takes no rank), grouped 256 uids a row. The plays of the day
 * are found through the BRIN index on received_at; the ranks are one walk of the site order.
 */
export const SNAPSHOT_SQL = `WITH played AS (
    SELECT r.uid, count(*)::int AS plays
      FROM play_record r JOIN chart c ON c.level_id = r.level_id
     WHERE r.received_at >= $2 AND r.received_at < $3 AND ${COUNTED_RECORD('r', 'c')}
     GROUP BY r.uid
  ), ranked AS (
    SELECT r.uid, row_number() OVER (ORDER BY r.atp DESC, r.uid ASC)::int AS site_rank
      FROM player_rating r WHERE NOT ${activeBanPredicate('r')}
  ), entries AS (
    SELECT p.uid, p.plays, (rt.atp * 10000)::int AS atp_e4, COALESCE(k.site_rank, 0) AS site_rank
      FROM played p JOIN player_rating rt ON rt.uid = p.uid LEFT JOIN ranked k ON k.uid = p.uid
  ), inserted AS (
    INSERT INTO rating_history_day (bucket, day, slots, atp_e4, site_rank, plays)
    SELECT ${historyBucket('uid')}, $1::smallint,
           array_agg(${historySlot('uid')} ORDER BY uid), array_agg(atp_e4 ORDER BY uid),
           array_agg(site_rank ORDER BY uid), array_agg(plays ORDER BY uid)
      FROM entries GROUP BY 1
    ON CONFLICT DO NOTHING
    RETURNING cardinality(slots) AS players
  )
INSERT INTO rating_history_run (day, players) SELECT $1::smallint, COALESCE(sum(players), 0)::int FROM inserted
RETURNING players`;

/** Player $1's entries of days $2..$3, oldest first: one range of PK_rating_history_day, at most one row a day. */
export const HISTORY_SQL = `SELECT day, atp_e4[i] AS atp_e4, site_rank[i] AS site_rank, plays[i] AS plays
  FROM (SELECT day, atp_e4, site_rank, plays, array_position(slots, ${historySlot('$1::bigint')}) AS i
          FROM rating_history_day
         WHERE bucket = ${historyBucket('$1::bigint')} AND day BETWEEN $2 AND $3) AS d
 WHERE i IS NOT NULL
 ORDER BY day`;

/** Whether player $1 exists, and whether it is under an active ban (the player module's predicate). */
const PLAYER_SQL = `SELECT ${activeBanPredicate('p')} AS banned FROM player p WHERE p.uid = $1`;

export interface HistoryRow {
  day: number;
  atp_e4: number;
  site_rank: number;
  plays: number;
}

/** A calendar day: its number (days since 1970-01-01) and its first and next day's first instant. */
export interface CalendarDay {
  day: number;
  start: Date;
  end: Date;
}

/** The rating history (Upload's table rating_history_day and its watermark rating_history_run). */
@Injectable()
export class RatingHistoryRepository {
  /** `reads`: the read replica within its lag bound (ReadQueries), for the history reads; the snapshot writes take a manager. */
  constructor(
    private readonly prepared: PreparedQueries,
    private readonly reads: ReadQueries,
  ) {}

  /** Waits for the snapshot lock of this transaction (released at its end). */
  async lockSnapshots(manager: EntityManager): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [SNAPSHOT_LOCK_KEY]);
  }

  /**
   * The calendar day containing `at` in `timeZone` (days since 1970-01-01) and its bounds, by
   * PostgreSQL's time zone database: the day periods' own rule (rhythmc_ensure_calendar_periods:
   * `date_trunc('day', t AT TIME ZONE tz) AT TIME ZONE tz`), so a history day is the board's day.
   */
  async calendarDay(at: Date, timeZone: string): Promise<CalendarDay> {
    const [row] = await this.prepared.run<CalendarDay>(
      'rating_history_calendar_day',
      `SELECT d - DATE '1970-01-01' AS day, d::timestamp AT TIME ZONE $2 AS start, (d + 1)::timestamp AT TIME ZONE $2 AS "end"
         FROM (SELECT ($1::timestamptz AT TIME ZONE $2)::date AS d) AS x`,
      [at, timeZone],
    );
    return row;
  }

  /** Day `day`'s bounds in `timeZone` (23 or 25 hours across a DST change), in the caller's transaction. */
  async dayBounds(manager: EntityManager, day: number, timeZone: string): Promise<CalendarDay> {
    const [row] = await manager.query<CalendarDay[]>(
      `SELECT $1::int AS day, (DATE '1970-01-01' + $1::int)::timestamp AT TIME ZONE $2 AS start,
              (DATE '1970-01-01' + $1::int + 1)::timestamp AT TIME ZONE $2 AS "end"`,
      [day, timeZone],
    );
    return row;
  }

  /** The newest day taken, or null before the first snapshot. */
  async lastDay(manager?: EntityManager): Promise<number | null> {
    const sql = 'SELECT max(day) AS day FROM rating_history_run';
    const [row] = manager
      ? await manager.query<Array<{ day: number | null }>>(sql)
      : await this.prepared.run<{ day: number | null }>('rating_history_last_day', sql, []);
    return row.day;
  }

  /** Takes day `day` (plays received in [start, end)); answers the players written. Inside the lock, for a day not taken. */
  async snapshot(manager: EntityManager, day: number, start: Date, end: Date): Promise<number> {
    const [row] = await manager.query<Array<{ players: number }>>(SNAPSHOT_SQL, [day, start, end]);
    return row.players;
  }

  /** The player's snapshots of days `from`..`to`, oldest first. */
  history(uid: string, from: number, to: number): Promise<HistoryRow[]> {
    return this.reads.run<HistoryRow>('rating_history_read', HISTORY_SQL, [uid, from, to]);
  }

  /** null when there is no such player; otherwise whether it is under an active ban. */
  async player(uid: string): Promise<{ banned: boolean } | null> {
    const [row] = await this.reads.run<{ banned: boolean }>('rating_history_player', PLAYER_SQL, [uid]);
    return row ?? null;
  }
}
