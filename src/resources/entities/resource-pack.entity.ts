import { Check, Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export const PACK_TYPES = ['FULL', 'CHAPTER', 'SONG'] as const;
export type PackType = (typeof PACK_TYPES)[number];

/**
 * A resource pack described through PUT /admin/packs. `file` names a `packs/*.zip` of the index;
 * it is deliberately not a foreign key: a rescan may drop the file while the description stays
 * (the pack manifest then leaves the pack out until the file is back).
 */
@Entity({ name: 'resource_pack' })
@Check('CHK_resource_pack_type', `"type" IN ('FULL', 'CHAPTER', 'SONG')`)
export class ResourcePackEntity {
  @PrimaryColumn({ type: 'varchar', length: 128, collation: 'C' })
  name!: string;

  @Column({ name: 'display_name', type: 'varchar', length: 256 })
  displayName!: string;

  @Column({ type: 'varchar', length: 16 })
  type!: PackType;

  @Column({ name: 'available_songs', type: 'int', array: true })
  availableSongs!: number[];

  @Column({ type: 'varchar', length: 1024 })
  file!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
