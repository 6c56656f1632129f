import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { PlayDetail, ReviewedPlay, ReviewFilter, ReviewState } from './play-review.types';

/** The listing condition of each state, on a play_record `r`. */
const STATE_CONDITION: Record<ReviewState, string> = {
  flagged: 'cardinality(r.flags) > 0 AND r.approved_at IS NULL AND r.voided_at IS NULL',
  approved: 'r.approved_at IS NOT NULL AND r.voided_at IS NULL',
  voided: 'r.voided_at IS NOT NULL',
  all: 'true',
};

interface PlaySqlRow {
  id: string;
  uid: string;
  username: string;
  level_id: number;
  acc: number;
  pass: boolean;
  time_ms: string;
  received_at: Date;
  server_id: number;
  flags: string[];
  approved: boolean;
  voided: boolean;
  void_reason: string | null;
  placeholder: boolean;
}

const PLAY_SELECT = `SELECT r.id, r.uid, p.username, r.level_id, r.acc, r.pass, r.time_ms, r.received_at, r.server_id, r.flags,
    r.approved_at IS NOT NULL AS approved, r.voided_at IS NOT NULL AS voided, r.void_reason, COALESCE(c.placeholder, true) AS placeholder
  FROM play_record r
  JOIN player p ON p.uid = r.uid
  LEFT JOIN chart c ON c.level_id = r.level_id`;

const toPlay = (row: PlaySqlRow): ReviewedPlay => ({
  id: row.id,
  uid: row.uid,
  username: row.username,
  levelId: row.level_id,
  acc: row.acc,
  pass: row.pass,
  timeMs: Number(row.time_ms),
  receivedAt: row.received_at,
  serverId: row.server_id,
  flags: row.flags,
  approved: row.approved,
  voided: row.voided,
  voidReason: row.void_reason,
  placeholder: row.placeholder,
});

/** The review side of play_record: listing by state, and the approve / void / restore marks. */
@Injectable()
export class PlayReviewRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Newest first (id descending), at most `limit` rows. */
  async list(filter: ReviewFilter): Promise<ReviewedPlay[]> {
    const rows = await this.dataSource.query<PlaySqlRow[]>(
      `${PLAY_SELECT}
        WHERE ${STATE_CONDITION[filter.state]}
          AND ($1::bigint IS NULL OR r.id < $1)
          AND ($2::text IS NULL OR $2 = ANY(r.flags))
          AND ($3::bigint IS NULL OR r.uid = $3)
        ORDER BY r.id DESC
        LIMIT $4`,
      [filter.before ?? null, filter.check ?? null, filter.uid ?? null, filter.limit],
    );
    return rows.map(toPlay);
  }

  async find(id: string, manager?: EntityManager): Promise<ReviewedPlay | null> {
    const rows = await (manager ?? this.dataSource.manager).query<PlaySqlRow[]>(`${PLAY_SELECT} WHERE r.id = $1`, [id]);
    return rows.length > 0 ? toPlay(rows[0]) : null;
  }

  /** The counters and flags of one play, for its review page. */
  async findDetail(id: string): Promise<PlayDetail | null> {
    const rows = await this.dataSource.query<Array<Record<string, number | boolean | string>>>(
      `SELECT tap_perfect, tap_great, tap_miss, hold_perfect, hold_great, hold_miss,
              dodge_perfect, dodge_great, dodge_miss, look_perfect, look_great, look_miss,
              max_combo, full_combo, all_perfect, server_name
         FROM play_record WHERE id = $1`,
      [id],
    );
    if (rows.length === 0) return null;
    const row = rows[0];
    const group = (name: string) => ({
      perfect: Number(row[`${name}_perfect`]),
      great: Number(row[`${name}_great`]),
      miss: Number(row[`${name}_miss`]),
    });
    return {
      judgements: { tap: group('tap'), hold: group('hold'), dodge: group('dodge'), look: group('look') },
      maxCombo: Number(row.max_combo),
      fullCombo: row.full_combo === true,
      allPerfect: row.all_perfect === true,
      serverName: String(row.server_name),
    };
  }

  /** Marks a flagged play approved (kept when it already is). */
  async approve(id: string, manager: EntityManager): Promise<void> {
    await manager.query('UPDATE play_record SET approved_at = COALESCE(approved_at, now()) WHERE id = $1', [id]);
  }

  /** Voids a play (a voided play keeps its first void time and reason). */
  async void(id: string, reason: string | null, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE play_record SET void_reason = CASE WHEN voided_at IS NULL THEN $2 ELSE void_reason END, voided_at = COALESCE(voided_at, now())
        WHERE id = $1`,
      [id, reason],
    );
  }

  /** Takes a void back. */
  async restore(id: string, manager: EntityManager): Promise<void> {
    await manager.query('UPDATE play_record SET voided_at = NULL, void_reason = NULL WHERE id = $1', [id]);
  }
}
