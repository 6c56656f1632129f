import { Check, Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A member of staff who signs in to the console or calls the admin API with a personal token
 * (docs/decisions.md "Staff accounts"). The password is kept only as a scrypt hash.
 */
@Entity({ name: 'staff_account' })
@Check('CHK_staff_account_role', `"role" IN ('read-only', 'support', 'moderator', 'admin', 'owner')`)
export class StaffAccountEntity {
  @PrimaryGeneratedColumn({ type: 'int' })
  id!: number;

  /** Lower-case letters, digits, `.`, `_`, `-` (StaffNameRule); unique. */
  @Column({ type: 'varchar', length: 32, unique: true })
  name!: string;

  @Column({ type: 'varchar', length: 16 })
  /** A role of src/auth/permissions.ts (ROLES); the check constraint lists them. */
  role!: string;

  /** `scrypt$N=…,r=…,p=…$<salt>$<key>` (PasswordHasher). */
  @Column({ name: 'password_hash', type: 'varchar', length: 255 })
  passwordHash!: string;

  /** Key of the account's device cookies (hex); replaced with the password, which ends every device's trust. */
  @Column({ name: 'device_key', type: 'char', length: 64 })
  deviceKey!: string;

  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true })
  disabledAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'password_changed_at', type: 'timestamptz' })
  passwordChangedAt!: Date;

  @Column({ name: 'last_sign_in_at', type: 'timestamptz', nullable: true })
  lastSignInAt!: Date | null;

  /**
   * The second factor's secret (base32, src/staff/totp.ts) once confirmed; null: none. Kept as it
   * is: the service computes codes from it, so it cannot be hashed (docs/decisions.md "A second factor").
   */
  @Column({ name: 'totp_secret', type: 'varchar', length: 64, nullable: true })
  totpSecret!: string | null;

  /** A secret shown to the person and not yet confirmed with a code; replaced by each new enrolment. */
  @Column({ name: 'totp_pending_secret', type: 'varchar', length: 64, nullable: true })
  totpPendingSecret!: string | null;

  /** The 30 s step of the last code accepted: a code for it or an earlier one is refused (replay). */
  @Column({ name: 'totp_last_step', type: 'int', nullable: true })
  totpLastStep!: number | null;

  @Column({ name: 'totp_enabled_at', type: 'timestamptz', nullable: true })
  totpEnabledAt!: Date | null;
}
