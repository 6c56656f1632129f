import { Column, CreateDateColumn, Entity, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import type { GameServerEntity } from '../../server/entities/game-server.entity';

/** The long-lived bootstrap token of one game server (one live token per server). */
@Entity({ name: 'server_credential' })
export class ServerCredentialEntity {
  @PrimaryColumn({ name: 'server_id', type: 'int' })
  serverId!: number;

  @OneToOne('GameServerEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'server_id' })
  server?: GameServerEntity;

  @Column({ name: 'token_hash', type: 'char', length: 64, unique: true })
  tokenHash!: string;

  @CreateDateColumn({ name: 'issued_at', type: 'timestamptz' })
  issuedAt!: Date;
}
