import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  ManyToOne,
  JoinColumn,
  PrimaryGeneratedColumn,
  Unique,
} from 'typeorm';
import type { WebhookEntity } from './webhook.entity';

/**
 * The outbox and the delivery log in one: a row per webhook and event, written in the transaction
 * of the change (migrations/1795872000000-Webhooks.ts), claimed by one instance at a time, kept
 * with its attempts. Its id is the delivery id sent with every attempt.
 */
@Entity({ name: 'webhook_delivery' })
@Unique('UQ_webhook_delivery_event', ['webhookId', 'eventId'])
/** Each webhook's due deliveries in order: the claim (rhythmc_webhook_claim) reads it webhook by webhook. */
@Index('IDX_webhook_delivery_due', ['webhookId', 'nextAttemptAt'], { where: "state = 'pending'" })
@Index('IDX_webhook_delivery_log', ['webhookId', 'createdAt'])
/** Retention: finished deliveries (delivered, or given up), oldest first. */
@Index('IDX_webhook_delivery_finished', ['createdAt'], { where: "state IN ('delivered', 'failed')" })
export class WebhookDeliveryEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'PK_webhook_delivery' })
  id!: string;

  @Column({ name: 'webhook_id', type: 'int' })
  webhookId!: number;

  @ManyToOne('WebhookEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'webhook_id', foreignKeyConstraintName: 'FK_webhook_delivery_webhook' })
  webhook?: WebhookEntity;

  @Column({ name: 'event_id', type: 'uuid' })
  eventId!: string;

  @Column({ name: 'event_type', type: 'varchar', length: 32 })
  eventType!: string;

  @Column({ type: 'jsonb' })
  payload!: Record<string, unknown>;

  /** `pending`, `delivered`, `failed` (gave up). */
  @Column({ type: 'varchar', length: 16, default: 'pending' })
  state!: string;

  @Column({ type: 'int', default: 0 })
  attempts!: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', default: () => 'now()' })
  nextAttemptAt!: Date;

  @Column({ name: 'last_status', type: 'int', nullable: true })
  lastStatus!: number | null;

  @Column({ name: 'last_error', type: 'varchar', length: 256, nullable: true })
  lastError!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt!: Date | null;
}
