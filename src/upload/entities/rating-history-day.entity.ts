import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One day of rating history for one block of 256 uids (`bucket` = uid >> 8): for each player of
 * the block who had a counted play that day, in slot order, its slot (uid & 255), ATP in
 * ten-thousandths, site rank (0: none, the player was banned) and counted plays of that day, as
 * parallel arrays (docs/decisions.md "Rating history": ~15 bytes a player a day instead of ~50
 * for a row each). Written once by the daily snapshot, never updated but by an erasure.
 */
@Entity({ name: 'rating_history_day' })
export class RatingHistoryDayEntity {
  @PrimaryColumn({ type: 'bigint', primaryKeyConstraintName: 'PK_rating_history_day' })
  bucket!: string;

  /** Days since 1970-01-01 of the service's calendar date (decisions.md §8 time zone). */
  @PrimaryColumn({ type: 'smallint', primaryKeyConstraintName: 'PK_rating_history_day' })
  day!: number;

  @Column({ type: 'smallint', array: true })
  slots!: number[];

  @Column({ name: 'atp_e4', type: 'integer', array: true })
  atpE4!: number[];

  @Column({ name: 'site_rank', type: 'integer', array: true })
  siteRank!: number[];

  @Column({ type: 'integer', array: true })
  plays!: number[];
}
