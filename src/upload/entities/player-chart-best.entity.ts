import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { PlayerEntity } from '../../player/entities/player.entity';

/**
 * A player's best counted play on one chart, kept up to date by every upload so that ATP and
 * track ranks never re-read the history. The best is the highest `acc`; among plays with that
 * acc, the earliest `payload.time` ("the time it was first reached", the track-rank tie-break).
 * `rating` is that play's rating at the chart constant of the last computation (admin recompute
 * refreshes it after a constant changes). `version` is the player's rating version of its last
 * change, which orders the updates of the Redis rank index.
 */
@Entity({ name: 'player_chart_best' })
@Index('IDX_player_chart_best_top', ['uid', 'rating'])
// (level_id, acc DESC, first_time_ms ASC, uid ASC): each chart's track order, written in the migration.
@Index('IDX_player_chart_best_track', { synchronize: false })
// (level_id, home_server_id, acc DESC, first_time_ms ASC, uid ASC): the track order within each home server, in the migration.
@Index('IDX_player_chart_best_home', { synchronize: false })
export class PlayerChartBestEntity {
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

  /** The play_record holding the best. */
  @Column({ name: 'record_id', type: 'bigint' })
  recordId!: string;

  @Column({ type: 'double precision' })
  rating!: number;

  @Column({ type: 'bigint' })
  version!: string;

  /** The player's home server, copied as on player_rating (scoped boards). */
  @Column({ name: 'home_server_id', type: 'int', nullable: true })
  homeServerId!: number | null;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;
}
