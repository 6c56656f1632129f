import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * A collection definition (title, tag, asset, …). `unlockMethod` is the generic,
 * target-agnostic unlock rule stored as given; `properties` is type-specific.
 * Asset collections are created automatically when a player unlock names an unknown
 * `rhythmc:assets.` key, and are never listed.
 */
@Entity({ name: 'collection' })
@Index('IDX_collection_type', ['type'])
export class CollectionEntity {
  @PrimaryColumn({ type: 'varchar', length: 128 })
  key!: string;

  @Column({ type: 'varchar', length: 32 })
  type!: string;

  @Column({ name: 'unlock_method', type: 'jsonb' })
  unlockMethod!: Record<string, unknown>;

  @Column({ type: 'jsonb', default: {} })
  properties!: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
