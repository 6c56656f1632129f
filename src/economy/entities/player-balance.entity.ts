import { Column, Entity, Index, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import type { PlayerEntity } from '../../player/entities/player.entity';

/**
 * A player's energy balance (`wattHour`), as last synchronised by a game server. A player who
 * never synced has no row and is not ranked. The ranking index `(watt_hour DESC, uid ASC)` is
 * written by hand in the migration (TypeORM cannot express a per-column sort order), hence
 * `synchronize: false`.
 */
@Entity({ name: 'player_balance' })
@Index('IDX_player_balance_rank', { synchronize: false })
export class PlayerBalanceEntity {
  @PrimaryColumn({ type: 'bigint' })
  uid!: string;

  @OneToOne('PlayerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'uid' })
  player?: PlayerEntity;

  /** bigint, carried as a string; at most 2^53 - 1 (validated on the way in). */
  @Column({ name: 'watt_hour', type: 'bigint' })
  wattHour!: string;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;
}
