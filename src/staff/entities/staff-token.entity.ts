import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import type { StaffAccountEntity } from './staff-account.entity';

/**
 * A personal API token of a staff account, for the CLI and scripts: shown once, only its SHA-256
 * kept. It acts with its own role or its account's, whichever is lower, read at every request.
 * Revoking deletes the row.
 */
@Entity({ name: 'staff_token' })
@Index('IDX_staff_token_account', ['accountId'])
@Check('CHK_staff_token_role', `"role" IN ('read-only', 'support', 'moderator', 'admin', 'owner')`)
export class StaffTokenEntity {
  @PrimaryGeneratedColumn({ type: 'int' })
  id!: number;

  @Column({ name: 'account_id', type: 'int' })
  accountId!: number;

  @ManyToOne('StaffAccountEntity', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: StaffAccountEntity;

  @Column({ type: 'varchar', length: 64 })
  name!: string;

  @Column({ type: 'varchar', length: 16 })
  /** A role of src/auth/permissions.ts (ROLES); the check constraint lists them. */
  role!: string;

  @Column({ name: 'token_hash', type: 'char', length: 64, unique: true })
  tokenHash!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** Moved forward at most once a minute. */
  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt!: Date | null;
}
