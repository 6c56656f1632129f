import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * One playable chart of the catalog (interface.md "Chart catalog entry"). Only active charts are
 * listed; an upload naming an unknown level creates an inactive placeholder (`Level <id>`,
 * version `unknown`, constant 0).
 */
@Entity({ name: 'chart' })
export class ChartEntity {
  @PrimaryColumn({ name: 'level_id', type: 'int' })
  levelId!: number;

  @Column({ type: 'varchar', length: 128 })
  name!: string;

  @Column({ name: 'difficulty_constant', type: 'double precision', default: 0 })
  difficultyConstant!: number;

  @Column({ type: 'varchar', length: 64 })
  version!: string;

  @Column({ type: 'boolean', default: false })
  active!: boolean;

  /** Created by an upload naming an unknown level (not by the admin API): its plays are stored but unranked. */
  @Column({ type: 'boolean', default: false })
  placeholder!: boolean;

  /** The chart's note count (PUT /admin/charts `notes`); when set, a play's judged notes must add up to it. */
  @Column({ type: 'int', nullable: true })
  notes!: number | null;

  /** Shown on the wire as a local date-time in the service's time zone. */
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
