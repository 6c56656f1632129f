import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import type { PlayerEntity } from './player.entity';

/**
 * A ban. Active while `lifted_at IS NULL AND (until IS NULL OR until > now())`; at most one
 * unlifted ban per player (a new ban lifts the previous one). Rows are kept as history.
 */
@Entity({ name: 'player_ban' })
@Index('UQ_player_ban_unlifted', ['uid'], { unique: true, where: 'lifted_at IS NULL' })
export class PlayerBanEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ type: 'bigint' })
  uid!: string;

  @ManyToOne('PlayerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'uid' })
  player?: PlayerEntity;

  @Column({ type: 'varchar', length: 512, default: '' })
  reason!: string;

  /** Kick message shown in game. */
  @Column({ type: 'varchar', length: 512, default: '' })
  message!: string;

  /** Null: permanent. */
  @Column({ type: 'timestamptz', nullable: true })
  until!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'lifted_at', type: 'timestamptz', nullable: true })
  liftedAt!: Date | null;
}
