import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A frame addressed to one game-server session (today: `kick_player`), kept until a socket of
 * that session takes it. Every instance that hears the event writes the same row (the key is the
 * event and the session), the instance holding the session's socket marks it delivered, and a
 * socket that connects later (a reconnect after 4001, on any instance) takes what is left.
 * Rows expire after one server-token lifetime: a session that did not refresh by then is gone.
 */
@Entity({ name: 'realtime_outbox' })
@Index('IDX_realtime_outbox_pending', ['serverSessionId'], { where: 'delivered_at IS NULL' })
@Index('IDX_realtime_outbox_expires', ['expiresAt'])
export class RealtimeOutboxEntity {
  @PrimaryColumn({ name: 'event_id', type: 'uuid' })
  eventId!: string;

  @PrimaryColumn({ name: 'server_session_id', type: 'uuid' })
  serverSessionId!: string;

  /** The frame as sent: `{event, data}`. */
  @Column({ type: 'jsonb' })
  frame!: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt!: Date | null;
}
