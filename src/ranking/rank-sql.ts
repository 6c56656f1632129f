/**
 * SQL fragments and row mappers of the rank keys and the ban check, shared by ranking's repositories
 * and the upload's (the one surface of ranking that repositories read: .dependency-cruiser.js).
 */
import { activeBanPredicate } from '../player/active-ban.rule';
import type { BanCheck, BestRow } from './ranking.types';

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

/** Select-list columns (shared with the upload's state read): whether $1 is under an active ban, the ban generation, and the database clock. */
export const BAN_CHECK = `(SELECT ${activeBanPredicate('me_uid')} FROM (SELECT $1::bigint AS uid) AS me_uid) AS self_banned,
  (SELECT generation FROM rank_ban_generation WHERE id = 1) AS ban_generation,
  now() AS db_now`;

/**
 * The advisory lock of period writes: every upload's period step (rhythmc_count_period_play,
 * migrations/1795881000000-Seasons.ts) holds it shared to its commit; a close holds it
 * exclusively while it marks the period closed, so no play lands in a period after its close.
 */
export const PERIOD_LOCK_KEY = 727_044;
