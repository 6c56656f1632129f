import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import type { PlayerEntity } from '../../player/entities/player.entity';
import type { ServerSessionEntity } from './server-session.entity';

export type PlayerLoginMode = 'ONLINE' | 'TOKEN' | 'OFFLINE_REFRESH';
/**
 * `handover`: the player logged in through another server of the same network; `takeover`: a login
 * with proof of ownership took over a session opened without it (docs/decisions.md "Server switching").
 */
export type PlayerLogoutReason =
  'logout' | 'server_session_ended' | 'banned' | 'expired' | 'handover' | 'takeover' | 'erased';

/**
 * A player's login, bound to the server session it came through (`resume_session` may move it
 * to another session of the same network). Live while `logged_out_at IS NULL` and the token has
 * not expired; at most one row per player is not logged out (partial unique index).
 */
@Entity({ name: 'player_session' })
@Index('UQ_player_session_open_per_player', ['uid'], { unique: true, where: 'logged_out_at IS NULL' })
@Index('IDX_player_session_open_by_server_session', ['serverSessionId'], { where: 'logged_out_at IS NULL' })
// Retention: a deleted server session cascades to its player sessions (the foreign key needs the whole
// index), and ended sessions are purged oldest first.
@Index('IDX_player_session_server_session', ['serverSessionId'])
@Index('IDX_player_session_logged_out', ['loggedOutAt'], { where: 'logged_out_at IS NOT NULL' })
export class PlayerSessionEntity {
  // The database generates it: gen_random_uuid(), core since PostgreSQL 13 (uuidExtension 'pgcrypto' in database-options.ts).
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ type: 'bigint' })
  uid!: string;

  @ManyToOne('PlayerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'uid' })
  player?: PlayerEntity;

  @Column({ name: 'server_session_id', type: 'uuid' })
  serverSessionId!: string;

  @ManyToOne('ServerSessionEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'server_session_id' })
  serverSession?: ServerSessionEntity;

  @Column({ name: 'token_hash', type: 'char', length: 64, unique: true })
  tokenHash!: string;

  @Column({ name: 'token_expires_at', type: 'timestamptz' })
  tokenExpiresAt!: Date;

  @Column({ type: 'varchar', length: 16 })
  mode!: PlayerLoginMode;

  /**
   * Opened with proof of ownership: a Net Token, or a resume token issued to a proven session. An
   * ONLINE login proves none (interface.md, known weakness 6); a session without proof gives way
   * to a login with proof (docs/decisions.md "Server switching").
   */
  @Column({ type: 'boolean', default: false })
  proven!: boolean;

  /** Last sign of the player's liveness: the login, a resume_session, an options sync. */
  @Column({ name: 'renewed_at', type: 'timestamptz', default: () => 'now()' })
  renewedAt!: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'logged_out_at', type: 'timestamptz', nullable: true })
  loggedOutAt!: Date | null;

  @Column({ name: 'logout_reason', type: 'varchar', length: 24, nullable: true })
  logoutReason!: PlayerLogoutReason | null;
}
