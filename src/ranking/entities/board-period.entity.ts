import { Check, Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** What a period is: a calendar period (its boundaries in PERIOD_TIME_ZONE) or a season set by staff. */
export type PeriodKind = 'day' | 'week' | 'month' | 'season';

/**
 * A period of the boards (issue #44, docs/decisions.md "Periods and seasons"). Calendar periods
 * (day, week from Monday, month) are created by the period job ahead of their start, one row per
 * (kind, starts_at); seasons by staff. A play counts for every period open at the play's instant
 * (starts_at ≤ t < ends_at, not closed). Closing sets closed_at (uploads stop writing into it);
 * archiving copies its boards into the archive blocks (period_atp_rank_block and the other three)
 * and sets archived_at and archived_in_blocks.
 */
@Entity({ name: 'board_period' })
@Check('CHK_board_period_kind', `"kind" IN ('day', 'week', 'month', 'season')`)
@Check('CHK_board_period_span', `"ends_at" > "starts_at"`)
@Check('CHK_board_period_grant', `("grant_collection" IS NULL) = ("grant_top" IS NULL)`)
@Index('UQ_board_period_calendar', ['kind', 'startsAt'], { unique: true, where: `kind <> 'season'` })
@Index('UQ_board_period_slug', ['slug'], { unique: true })
@Index('IDX_board_period_open', ['endsAt'], { where: 'closed_at IS NULL' })
export class BoardPeriodEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ type: 'varchar', length: 8 })
  kind!: PeriodKind;

  /** Seasons only: the name staff and the API use (`season:<slug>`). */
  @Column({ type: 'varchar', length: 64, nullable: true })
  slug!: string | null;

  @Column({ type: 'varchar', length: 128, nullable: true })
  name!: string | null;

  @Column({ name: 'starts_at', type: 'timestamptz' })
  startsAt!: Date;

  @Column({ name: 'ends_at', type: 'timestamptz' })
  endsAt!: Date;

  /** Seasons only: the collection granted at close to the top `grant_top` of the season's ATP board. */
  @Column({ name: 'grant_collection', type: 'varchar', length: 64, nullable: true })
  grantCollection!: string | null;

  @Column({ name: 'grant_top', type: 'int', nullable: true })
  grantTop!: number | null;

  @Column({ name: 'closed_at', type: 'timestamptz', nullable: true })
  closedAt!: Date | null;

  @Column({ name: 'archived_at', type: 'timestamptz', nullable: true })
  archivedAt!: Date | null;

  /**
   * True once the archive's blocks hold the period's boards. A period archived by the release
   * before the blocks (rows, archived_at set, this false; the rows dropped since) is read live until
   * the period job archives it again in blocks (docs/decisions.md "Periods and seasons", archive layout).
   */
  @Column({ name: 'archived_in_blocks', type: 'boolean', default: false })
  archivedInBlocks!: boolean;

  /**
   * Seasons with a close rule, once archived: the players the close granted the collection to
   * (those of the top who owned it already are not listed). null: no close rule, not archived yet,
   * or archived by a release before this column. An erasure removes the player's uid.
   */
  @Column({ name: 'granted_uids', type: 'bigint', array: true, nullable: true })
  grantedUids!: string[] | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}
