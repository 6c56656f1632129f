import { Column, Entity, Index, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import type { PlayerEntity } from '../../player/entities/player.entity';

/**
 * A player's ATP, maintained with every upload. A row exists exactly when the player has at least
 * one counted play, so these rows are the site ranking's members. `atp` is exact to 4 decimals
 * (numeric), so ties compare exactly. The row is the player's lock: every change of the player's
 * bests and ATP runs with it locked, and sets `version` to the next value of the sequence
 * rank_version_seq: versions only grow, even across a player losing the row and getting it back.
 */
@Entity({ name: 'player_rating' })
// (atp DESC, uid ASC): the site order, written in the migration (TypeORM has no per-column order).
@Index('IDX_player_rating_site', { synchronize: false })
@Index('IDX_player_rating_change_seq', ['changeSeq'])
// (home_server_id, atp DESC, uid ASC): the site order within each home server (scoped boards), in the migration.
@Index('IDX_player_rating_home', { synchronize: false })
export class PlayerRatingEntity {
  @PrimaryColumn({ type: 'bigint' })
  uid!: string;

  @OneToOne('PlayerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'uid' })
  player?: PlayerEntity;

  /** numeric(10,4), carried as a string. */
  @Column({ type: 'numeric', precision: 10, scale: 4 })
  atp!: string;

  @Column({ type: 'bigint' })
  version!: string;

  /**
   * rank_change_seq at the row's last write, set by a trigger (migration RankChangeLog): the
   * watermark of the in-process rank index's snapshot.
   */
  @Column({ name: 'change_seq', type: 'bigint', default: 0 })
  changeSeq!: string;

  /**
   * The player's home server (player.home_server_id, of the latest login's group and country),
   * copied for the scoped boards: set on insert by a trigger, moved by the login that changes it
   * (migrations HomeServer, HomeMovesOnScope). null: no login since the home was introduced.
   */
  @Column({ name: 'home_server_id', type: 'int', nullable: true })
  homeServerId!: number | null;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;
}
