import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One WebSocket connection of a game server, on whichever service instance holds it. Open while
 * `closed_at IS NULL`; `last_seen_at` is refreshed by the holding instance's ping loop, so the
 * rows of an instance that died stop counting after a minute and a half.
 */
@Entity({ name: 'ws_connection' })
@Index('IDX_ws_connection_open', ['instanceId'], { where: 'closed_at IS NULL' })
/** Retention: connections oldest first (a connection ends after it opened). */
@Index('IDX_ws_connection_connected', ['connectedAt'])
export class WsConnectionEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'instance_id', type: 'varchar', length: 64 })
  instanceId!: string;

  @Column({ name: 'server_id', type: 'int' })
  serverId!: number;

  @Column({ name: 'server_session_id', type: 'uuid' })
  serverSessionId!: string;

  @Column({ name: 'remote_address', type: 'varchar', length: 64, nullable: true })
  remoteAddress!: string | null;

  @Column({ name: 'connected_at', type: 'timestamptz' })
  connectedAt!: Date;

  @Column({ name: 'last_seen_at', type: 'timestamptz' })
  lastSeenAt!: Date;

  @Column({ name: 'closed_at', type: 'timestamptz', nullable: true })
  closedAt!: Date | null;

  @Column({ name: 'close_code', type: 'int', nullable: true })
  closeCode!: number | null;
}
