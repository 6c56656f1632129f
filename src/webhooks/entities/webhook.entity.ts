import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A receiver of outgoing events, registered by staff (docs/decisions.md "Webhooks"). The secret
 * signs every delivery, so it is kept as is (a hash could not sign); it is shown once, when the
 * webhook is created or its secret rotated, and never in a list, a log or the audit log.
 */
@Entity({ name: 'webhook' })
export class WebhookEntity {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'PK_webhook' })
  id!: number;

  @Column({ type: 'varchar', length: 64 })
  name!: string;

  /** http(s) URL; its address is checked when each delivery connects (webhook-address.ts). */
  @Column({ type: 'varchar', length: 2048 })
  url!: string;

  /** The event types it wants (webhook-events.ts). */
  @Column({ type: 'text', array: true })
  events!: string[];

  /** `json` (signed JSON) or `discord` (a Discord webhook message). */
  @Column({ type: 'varchar', length: 16, default: 'json' })
  format!: string;

  /** N of `player.atp_top`: the event fires when a player enters this top N. */
  @Column({ name: 'atp_top', type: 'int', default: 10 })
  atpTop!: number;

  @Column({ type: 'varchar', length: 128 })
  secret!: string;

  /**
   * The secret a rotation replaced: it still signs, beside `secret`, until `previousSecretExpiresAt`
   * (both null when there is none; the dispatcher ignores it once expired).
   */
  @Column({ name: 'previous_secret', type: 'varchar', length: 128, nullable: true })
  previousSecret!: string | null;

  @Column({ name: 'previous_secret_expires_at', type: 'timestamptz', nullable: true })
  previousSecretExpiresAt!: Date | null;

  @Column({ type: 'boolean', default: true })
  enabled!: boolean;

  /** Why the service turned it off (after failing too long); null when staff did or it is on. */
  @Column({ name: 'disabled_reason', type: 'varchar', length: 256, nullable: true })
  disabledReason!: string | null;

  /** The first failed attempt since its last success; null while it succeeds. */
  @Column({ name: 'failing_since', type: 'timestamptz', nullable: true })
  failingSince!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
