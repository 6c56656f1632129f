import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { PlayerEntity } from '../../player/entities/player.entity';

/**
 * A player's best counted play on a chart within one period (player_chart_best's rule, limited to
 * the plays of the period), written by the upload's own statement (rhythmc_count_period_play).
 */
@Entity({ name: 'period_chart_best' })
// (period_id, level_id, acc DESC, first_time_ms ASC, uid ASC): the period's track order, written in the migration.
@Index('IDX_period_chart_best_track', { synchronize: false })
@Index('IDX_period_chart_best_top', ['periodId', 'uid', 'rating'])
export class PeriodChartBestEntity {
  @PrimaryColumn({ name: 'period_id', type: 'bigint' })
  periodId!: string;

  @PrimaryColumn({ type: 'bigint' })
  uid!: string;

  @ManyToOne('PlayerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'uid' })
  player?: PlayerEntity;

  @PrimaryColumn({ name: 'level_id', type: 'int' })
  levelId!: number;

  @Column({ type: 'double precision' })
  acc!: number;

  @Column({ name: 'first_time_ms', type: 'bigint' })
  firstTimeMs!: string;

  @Column({ name: 'record_id', type: 'bigint' })
  recordId!: string;

  @Column({ type: 'double precision' })
  rating!: number;
}

/** A player's ATP within one period (rhythmc_atp_e4 over the player's period bests). */
@Entity({ name: 'period_rating' })
// (period_id, atp DESC, uid ASC): the period's site order, written in the migration.
@Index('IDX_period_rating_site', { synchronize: false })
export class PeriodRatingEntity {
  @PrimaryColumn({ name: 'period_id', type: 'bigint' })
  periodId!: string;

  @PrimaryColumn({ type: 'bigint' })
  uid!: string;

  @ManyToOne('PlayerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'uid' })
  player?: PlayerEntity;

  @Column({ type: 'numeric', precision: 10, scale: 4 })
  atp!: string;
}

/**
 * A closed period's ATP board in blocks of ranks (docs/decisions.md "Periods and seasons", archive
 * layout): block b holds the entries ranked b·ARCHIVE_BLOCK + 1 .. (b + 1)·ARCHIVE_BLOCK, in rank
 * order, as parallel arrays (an erasure removes an entry and leaves a gap in `ranks`). Written at
 * the close in one statement with PeriodAtpUidBlockEntity; the arrays are stored uncompressed
 * (STORAGE EXTERNAL, in the migration): a close does not spend its time compressing.
 */
@Entity({ name: 'period_atp_rank_block' })
export class PeriodAtpRankBlockEntity {
  @PrimaryColumn({ name: 'period_id', type: 'bigint' })
  periodId!: string;

  @PrimaryColumn({ type: 'int' })
  block!: number;

  @Column({ type: 'int', array: true })
  ranks!: number[];

  @Column({ type: 'bigint', array: true })
  uids!: string[];

  @Column({ type: 'numeric', precision: 10, scale: 4, array: true })
  atps!: string[];
}

/**
 * The same board by uid: the archived entries sorted by uid, ARCHIVE_BLOCK to a row, keyed by the
 * row's first uid, so a player's archived rank is one index probe and one array search.
 */
@Entity({ name: 'period_atp_uid_block' })
export class PeriodAtpUidBlockEntity {
  @PrimaryColumn({ name: 'period_id', type: 'bigint' })
  periodId!: string;

  @PrimaryColumn({ name: 'first_uid', type: 'bigint' })
  firstUid!: string;

  @Column({ type: 'bigint', array: true })
  uids!: string[];

  @Column({ type: 'int', array: true })
  ranks!: number[];
}

/** A closed period's chart boards in blocks of ranks, per chart (see PeriodAtpRankBlockEntity). */
@Entity({ name: 'period_chart_rank_block' })
export class PeriodChartRankBlockEntity {
  @PrimaryColumn({ name: 'period_id', type: 'bigint' })
  periodId!: string;

  @PrimaryColumn({ name: 'level_id', type: 'int' })
  levelId!: number;

  @PrimaryColumn({ type: 'int' })
  block!: number;

  @Column({ type: 'int', array: true })
  ranks!: number[];

  @Column({ type: 'bigint', array: true })
  uids!: string[];

  @Column({ type: 'double precision', array: true })
  accs!: number[];

  @Column({ type: 'double precision', array: true })
  ratings!: number[];
}

/** A closed period's chart boards by uid, per chart (see PeriodAtpUidBlockEntity). */
@Entity({ name: 'period_chart_uid_block' })
export class PeriodChartUidBlockEntity {
  @PrimaryColumn({ name: 'period_id', type: 'bigint' })
  periodId!: string;

  @PrimaryColumn({ name: 'level_id', type: 'int' })
  levelId!: number;

  @PrimaryColumn({ name: 'first_uid', type: 'bigint' })
  firstUid!: string;

  @Column({ type: 'bigint', array: true })
  uids!: string[];

  @Column({ type: 'int', array: true })
  ranks!: number[];
}
