import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import type { GameServerEntity } from '../../server/entities/game-server.entity';

/** replaced: a new login of the server; logout: the plugin's own; admin: POST /admin/servers/{id}/logout. */
export type ServerSessionEndReason = 'replaced' | 'logout' | 'admin';

/**
 * One login of a game server. The access token rotates on refresh (same session, players stay
 * bound); the session ends on logout or when a new login replaces it. At most one session per
 * server is open (`ended_at IS NULL`), enforced by a partial unique index.
 */
@Entity({ name: 'server_session' })
@Index('UQ_server_session_open_per_server', ['serverId'], { unique: true, where: 'ended_at IS NULL' })
/** Retention: ended sessions, oldest first. */
@Index('IDX_server_session_ended', ['endedAt'], { where: 'ended_at IS NOT NULL' })
export class ServerSessionEntity {
  // The database generates it: gen_random_uuid(), core since PostgreSQL 13 (uuidExtension 'pgcrypto' in database-options.ts).
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'server_id', type: 'int' })
  serverId!: number;

  @ManyToOne('GameServerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'server_id' })
  server?: GameServerEntity;

  @Column({ name: 'token_hash', type: 'char', length: 64, unique: true })
  tokenHash!: string;

  @Column({ name: 'token_expires_at', type: 'timestamptz' })
  tokenExpiresAt!: Date;

  @Column({ name: 'plugin_version', type: 'int' })
  pluginVersion!: number;

  @Column({ name: 'plugin_sha', type: 'varchar', length: 128 })
  pluginSha!: string;

  @Column({ name: 'client_ip', type: 'varchar', length: 64, nullable: true })
  clientIp!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'refreshed_at', type: 'timestamptz', nullable: true })
  refreshedAt!: Date | null;

  @Column({ name: 'ended_at', type: 'timestamptz', nullable: true })
  endedAt!: Date | null;

  @Column({ name: 'end_reason', type: 'varchar', length: 16, nullable: true })
  endReason!: ServerSessionEndReason | null;
}
