import { Check, Column, Entity, PrimaryColumn } from 'typeorm';
import type { ResourceKind } from '../resource-paths';

/**
 * One file of RESOURCE_DIR (`data/**`, `lang/**`, `packs/*.zip`). The hashes are recomputed only
 * when `size` or `mtime_ns` no longer match the file; `hashed_at` says when they last were.
 */
@Entity({ name: 'resource_file' })
@Check('CHK_resource_file_kind', `"kind" IN ('data', 'lang', 'pack')`)
export class ResourceFileEntity {
  /** Relative to RESOURCE_DIR with `/` separators. Collation "C": byte order, the same on every database. */
  @PrimaryColumn({ type: 'varchar', length: 1024, collation: 'C' })
  path!: string;

  @Column({ type: 'varchar', length: 8 })
  kind!: ResourceKind;

  /** bigint: TypeORM reads it as a string; the repository maps it to a number. */
  @Column({ type: 'bigint' })
  size!: string;

  /** Modification time in nanoseconds since the epoch, compared exactly. */
  @Column({ name: 'mtime_ns', type: 'bigint' })
  mtimeNs!: string;

  @Column({ type: 'char', length: 64 })
  sha256!: string;

  /** Packs only (the pack manifest's `sha1`). */
  @Column({ type: 'char', length: 40, nullable: true })
  sha1!: string | null;

  @Column({ name: 'hashed_at', type: 'timestamptz' })
  hashedAt!: Date;
}
