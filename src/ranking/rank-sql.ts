/** SQL fragments and row mappers that more than one upload repository uses. */
import type { BanCheck, BestRow } from './upload.types';

/** Epoch milliseconds (floored) of a timestamptz expression: the unit of first_time_ms. */
export const EPOCH_MS = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)::bigint`;

export interface BanCheckRow {
  self_banned: boolean;
  ban_generation: string;
  db_now: Date;
}

export const toBanCheck = (row: BanCheckRow): BanCheck => ({
  selfBanned: row.self_banned,
  generation: Number(row.ban_generation),
  dbNowMs: row.db_now.getTime(),
});

export interface BestSqlRow {
  acc: number;
  first_time_ms: string;
  record_id: string;
  rating: number;
  version: string;
}

export const toBest = (row: BestSqlRow): BestRow => ({
  acc: row.acc,
  firstTimeMs: Number(row.first_time_ms),
  recordId: row.record_id,
  rating: row.rating,
  version: Number(row.version),
});
