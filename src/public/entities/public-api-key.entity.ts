import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * An API key of the public read API (docs/decisions.md "Public API"): one per integration (a
 * website, a Discord bot, a hologram plugin), created by staff. Only the SHA-256 of the key is
 * stored; the key itself is shown once, in the answer that creates it. A revoked key keeps its row
 * (name, scopes, last use) for the record.
 */
@Entity({ name: 'public_api_key' })
export class PublicApiKeyEntity {
  @PrimaryGeneratedColumn()
  id!: number;

  /** What the key is for, as staff named it ("Discord bot"). */
  @Column({ type: 'varchar', length: 64 })
  name!: string;

  /** SHA-256 (hex) of the key. */
  @Column({ name: 'key_hash', type: 'char', length: 64, unique: true })
  keyHash!: string;

  /** `read:boards`, `read:players` (public-api.rules.ts). */
  @Column({ type: 'text', array: true })
  scopes!: string[];

  /** Calls a minute; null: PUBLIC_API_KEY_RATE_LIMIT. */
  @Column({ name: 'rate_limit', type: 'int', nullable: true })
  rateLimit!: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  /** The latest call this key made, written in batches (at most a minute behind, see ApiKeyUsage). */
  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt!: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;
}
