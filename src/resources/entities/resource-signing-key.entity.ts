import { Check, Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * The HMAC key of signed resource links: one row, created by the first instance that needs it,
 * shared by every instance on the database so links survive restarts and load balancing.
 */
@Entity({ name: 'resource_signing_key' })
@Check('CHK_resource_signing_key_single_row', `"id" = 1`)
export class ResourceSigningKeyEntity {
  @PrimaryColumn({ type: 'smallint' })
  id!: number;

  /** 32 random bytes, hex. */
  @Column({ type: 'char', length: 64 })
  secret!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
