import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import type { PlayerEntity } from '../../player/entities/player.entity';
import type { GameServerEntity } from '../../server/entities/game-server.entity';
import type { PlayerSessionEntity } from './player-session.entity';

/**
 * A session opened without proof (ONLINE) that a login with proof (a Net Token, a proven resume
 * token) through another server took over (docs/decisions.md "Server switching"). Read by the
 * player's admin profile and, per holding server, by the admin server list.
 */
@Entity({ name: 'player_session_takeover' })
@Index('IDX_player_session_takeover_uid', ['uid', 'takenAt'])
@Index('IDX_player_session_takeover_from_server', ['fromServerId', 'takenAt'])
// Retention: the oldest first, and the two foreign keys a deleted session is checked against.
@Index('IDX_player_session_takeover_taken', ['takenAt'])
@Index('IDX_player_session_takeover_from_session', ['fromSessionId'])
@Index('IDX_player_session_takeover_to_session', ['toSessionId'])
export class PlayerSessionTakeoverEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ type: 'bigint' })
  uid!: string;

  @ManyToOne('PlayerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'uid' })
  player?: PlayerEntity;

  @Column({ name: 'taken_at', type: 'timestamptz', default: () => 'now()' })
  takenAt!: Date;

  /** The session taken over, and the server that held it. */
  @Column({ name: 'from_session_id', type: 'uuid' })
  fromSessionId!: string;

  @ManyToOne('PlayerSessionEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'from_session_id' })
  fromSession?: PlayerSessionEntity;

  @Column({ name: 'from_server_id', type: 'int' })
  fromServerId!: number;

  @ManyToOne('GameServerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'from_server_id' })
  fromServer?: GameServerEntity;

  /** The session the login opened, and the server it came through. */
  @Column({ name: 'to_session_id', type: 'uuid' })
  toSessionId!: string;

  @ManyToOne('PlayerSessionEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'to_session_id' })
  toSession?: PlayerSessionEntity;

  @Column({ name: 'to_server_id', type: 'int' })
  toServerId!: number;

  @ManyToOne('GameServerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'to_server_id' })
  toServer?: GameServerEntity;

  /** The login's proof: `TOKEN` or `OFFLINE_REFRESH`. */
  @Column({ type: 'varchar', length: 16 })
  proof!: string;
}
