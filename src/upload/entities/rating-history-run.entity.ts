import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A day the rating history snapshot has taken (written in the snapshot's transaction): the job's watermark. */
@Entity({ name: 'rating_history_run' })
export class RatingHistoryRunEntity {
  @PrimaryColumn({ type: 'smallint', primaryKeyConstraintName: 'PK_rating_history_run' })
  day!: number;

  /** Players in the day's snapshot. */
  @Column({ type: 'integer' })
  players!: number;

  @Column({ name: 'taken_at', type: 'timestamptz', default: () => 'now()' })
  takenAt!: Date;
}
