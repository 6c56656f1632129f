import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One successful admin write (docs/decisions.md "Audit log"). Append-only: a trigger of the
 * migration refuses UPDATE and DELETE. `summary` holds what changed, never a token or secret.
 */
@Entity({ name: 'admin_audit' })
@Index('IDX_admin_audit_target', ['target', 'id'])
@Index('IDX_admin_audit_action', ['action', 'id'])
@Index('IDX_admin_audit_actor', ['actor', 'id'])
export class AdminAuditEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  at!: Date;

  /** `player.ban`, `server.register`, … */
  @Column({ type: 'varchar', length: 64 })
  action!: string;

  /** `player:1002`, `server:7`, `catalog:charts`, … */
  @Column({ type: 'varchar', length: 160 })
  target!: string;

  @Column({ type: 'jsonb' })
  summary!: Record<string, unknown>;

  /** The request's X-Request-Id (its log line carries the same id). */
  @Column({ name: 'request_id', type: 'varchar', length: 64, nullable: true })
  requestId!: string | null;

  /** The caller's address under TRUST_PROXY. */
  @Column({ name: 'source_address', type: 'varchar', length: 64, nullable: true })
  sourceAddress!: string | null;

  /** Which admin credential: an id, never the token (`admin` for ADMIN_TOKEN, `session:<id>`, `token:<id>`). */
  @Column({ type: 'varchar', length: 64 })
  credential!: string;

  /** Who: the staff account's name as it was then, `ADMIN_TOKEN`, or `anonymous` (a failed sign-in). */
  @Column({ type: 'varchar', length: 32 })
  actor!: string;

  /** The staff account's id; null for ADMIN_TOKEN and failed sign-ins. No foreign key: the log outlives accounts. */
  @Column({ name: 'actor_id', type: 'int', nullable: true })
  actorId!: number | null;
}
