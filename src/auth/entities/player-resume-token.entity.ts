import { Column, CreateDateColumn, Entity, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import type { PlayerEntity } from '../../player/entities/player.entity';

/** The player's one live resume token (OFFLINE_REFRESH); revoked by deleting the row. */
@Entity({ name: 'player_resume_token' })
export class PlayerResumeTokenEntity {
  @PrimaryColumn({ type: 'bigint' })
  uid!: string;

  @OneToOne('PlayerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'uid' })
  player?: PlayerEntity;

  @Column({ name: 'token_hash', type: 'char', length: 64, unique: true })
  tokenHash!: string;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  @CreateDateColumn({ name: 'issued_at', type: 'timestamptz' })
  issuedAt!: Date;

  /** Issued to a proven session: an OFFLINE_REFRESH login with it proves ownership too. */
  @Column({ type: 'boolean', default: false })
  proven!: boolean;
}
