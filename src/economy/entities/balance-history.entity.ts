import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import type { PlayerEntity } from '../../player/entities/player.entity';
import type { GameServerEntity } from '../../server/entities/game-server.entity';

/** One balance change (POST /player/economy), appended in the transaction that made it. */
@Entity({ name: 'balance_history' })
@Index('IDX_balance_history_uid_id', ['uid', 'id'])
/** Retention: the oldest changes first. */
@Index('IDX_balance_history_created', ['createdAt'])
export class BalanceHistoryEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ type: 'bigint' })
  uid!: string;

  @ManyToOne('PlayerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'uid' })
  player?: PlayerEntity;

  /** Null for the player's first synchronised balance. */
  @Column({ name: 'previous_watt_hour', type: 'bigint', nullable: true })
  previousWattHour!: string | null;

  @Column({ name: 'watt_hour', type: 'bigint' })
  wattHour!: string;

  /** The game server whose session sent the change. */
  @Column({ name: 'server_id', type: 'int', nullable: true })
  serverId!: number | null;

  @ManyToOne('GameServerEntity', { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'server_id' })
  server?: GameServerEntity;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
