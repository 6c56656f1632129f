import type { ChartRead, StoredRecord } from './upload.types';

/**
 * Whether a stored record counts towards bests, ATP and ranks (docs/decisions.md "Score
 * integrity"): passed, no failed check or approved, not voided, on a chart that is not a
 * placeholder. COUNTED_RECORD is the same rule in SQL; keep the two together.
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
