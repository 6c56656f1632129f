import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { GameServerEntity } from '../../server/entities/game-server.entity';

/**
 * Player logins answered 409 because another server held the player, counted per server and hour
 * (docs/decisions.md "Server switching"): a server that claims players it does not have shows in
 * the admin server list. Rows older than a week are deleted when the server's next one is written.
 */
@Entity({ name: 'server_conflict_count' })
export class ServerConflictCountEntity {
  @PrimaryColumn({ name: 'server_id', type: 'int' })
  serverId!: number;

  @ManyToOne('GameServerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'server_id' })
  server?: GameServerEntity;

  /** The hour (truncated) the counts belong to. */
  @PrimaryColumn({ type: 'timestamptz' })
  hour!: Date;

  /** Its ONLINE logins refused because another server held the player. */
  @Column({ name: 'online_refused', type: 'int', default: 0 })
  onlineRefused!: number;

  /** Logins through other servers refused because it held the player in a session without proof. */
  @Column({ name: 'kept_out', type: 'int', default: 0 })
  keptOut!: number;
}
