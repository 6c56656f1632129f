import type { ChartRead, StoredRecord } from './upload.types';

/**
 * Whether a stored record counts towards bests, ATP and ranks (docs/decisions.md "Score
 * integrity"): passed, no failed check or approved, not voided, on a chart that is not a
 * placeholder. COUNTED_RECORD is the same rule in SQL (test/e2e/twin-rules.e2e-spec.ts runs both
 * over every combination and asserts they agree); rhythmc_upload_record (upload/sql/) writes it
 * inline for a record it has just stored (never approved, never voided):
 * `p_pass AND cardinality(p_flags) = 0 AND NOT v_chart.placeholder`, which the same test extracts
 * from the function and compares over the new-record cases.
 */
export const recordCounts = (
  record: Pick<StoredRecord, 'pass' | 'flags' | 'approved' | 'voided'>,
  chart: Pick<ChartRead, 'placeholder'> | null,
): boolean =>
  record.pass &&
  !record.voided &&
  (record.flags.length === 0 || record.approved) &&
  chart !== null &&
  !chart.placeholder;

/** recordCounts in SQL, for a play_record `r` joined to its chart `c`. */
export const COUNTED_RECORD = (r: string, c: string) =>
  `(${r}.pass AND ${r}.voided_at IS NULL AND (cardinality(${r}.flags) = 0 OR ${r}.approved_at IS NOT NULL) AND NOT ${c}.placeholder)`;

/**
 * A play_record `r` that no review can ever make count, and that carries no review to keep: it did
 * not pass (COUNTED_RECORD needs `pass`, which is written once, on arrival), failed no check (so it
 * is in no review queue, and approving it is refused) and is not voided. Retention deletes these
 * once old (docs/decisions.md "Retention"); the partial index IDX_play_record_never_counts is this
 * predicate, column for column.
 */
export const NEVER_COUNTS_RECORD = (r: string) =>
  `(NOT ${r}.pass AND cardinality(${r}.flags) = 0 AND ${r}.voided_at IS NULL)`;
