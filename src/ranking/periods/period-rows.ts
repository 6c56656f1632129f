import type { PeriodKind } from '../entities/board-period.entity';

/*
 * The rows the period statements answer (period.repository.ts), and the mappers that narrow them
 * where the type of board_period or of a board row is wider than what a statement can answer.
 */

export interface PeriodRow {
  id: string;
  kind: PeriodKind;
  slug: string | null;
  name: string | null;
  starts_at: Date;
  ends_at: Date;
  grant_collection: string | null;
  grant_top: number | null;
  closed_at: Date | null;
  archived_at: Date | null;
  /** The archive (blocks) holds its boards: read them, not the live rows (board_period.archived_in_blocks). */
  archived_in_blocks: boolean;
  created_at: Date;
  /** What the close rule granted, ascending (board_period.granted_uids). */
  granted_uids: string[] | null;
}

/** What staff set on a season (board_period's season columns). */
export interface SeasonFields {
  name: string;
  startsAt: Date;
  endsAt: Date;
  grantCollection: string | null;
  grantTop: number | null;
}

/** A row of a period board (live or archived) with the player's names; `part` only in a window. */
export interface PeriodBoardRow {
  rank: string | null;
  part?: number;
  uid: string;
  username: string;
  display_name: string | null;
  atp?: string;
  acc?: number;
  rating?: number;
}

/** A season's row (kind 'season'): staff always set its slug and name. */
export type SeasonRow = PeriodRow & { kind: 'season'; slug: string; name: string };

/** A season's board_period row as SeasonRow; a row without its season columns is a broken invariant, not an answer. */
export function toSeasonRow(row: PeriodRow): SeasonRow {
  const { kind, slug, name } = row;
  if (kind !== 'season' || slug === null || name === null) throw new Error(`Period ${row.id} is not a named season`);
  return { ...row, kind, slug, name };
}

/** A row of a window around a player: every row has its rank (the archive's, or counted from the anchor). */
export type PeriodWindowRow = PeriodBoardRow & { rank: string };

/** A window's row as PeriodWindowRow: its rank, which the window statements always answer, narrowed to a string. */
export function toPeriodWindowRow<Row extends PeriodBoardRow>(row: Row): Row & { rank: string } {
  const { rank } = row;
  if (rank === null) throw new Error(`A period window's row of ${row.uid} has no rank`);
  return { ...row, rank };
}
