import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import type { StaffAccountEntity } from './staff-account.entity';

/**
 * A console session: the cookie holds a 256-bit secret, this row its SHA-256. It ends on sign-out
 * (the row is deleted), after STAFF_SESSION_IDLE_SECONDS without a request, after
 * STAFF_SESSION_MAX_SECONDS in all, and with its account (disabled, deleted, password reset).
 */
@Entity({ name: 'staff_session' })
@Index('IDX_staff_session_account', ['accountId'])
export class StaffSessionEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'account_id', type: 'int' })
  accountId!: number;

  @ManyToOne('StaffAccountEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: StaffAccountEntity;

  @Column({ name: 'token_hash', type: 'char', length: 64, unique: true })
  tokenHash!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** Moved forward at most once a minute (StaffAuthService), so the idle timeout is exact to a minute. */
  @Column({ name: 'last_seen_at', type: 'timestamptz' })
  lastSeenAt!: Date;

  /** Where the sign-in came from (TRUST_PROXY applies). */
  @Column({ name: 'source_address', type: 'varchar', length: 64, nullable: true })
  sourceAddress!: string | null;
}
