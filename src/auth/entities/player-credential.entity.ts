import { Column, CreateDateColumn, Entity, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import type { PlayerEntity } from '../../player/entities/player.entity';

/** The player's Net Token (TOKEN login mode); one live token per player. */
@Entity({ name: 'player_credential' })
export class PlayerCredentialEntity {
  @PrimaryColumn({ type: 'bigint' })
  uid!: string;

  @OneToOne('PlayerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'uid' })
  player?: PlayerEntity;

  @Column({ name: 'token_hash', type: 'char', length: 64, unique: true })
  tokenHash!: string;

  @CreateDateColumn({ name: 'issued_at', type: 'timestamptz' })
  issuedAt!: Date;
}
