import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row: a counter bumped in the same transaction as every admin write of the listed catalog
 * (collections, charts). Each instance serves the catalog reads from memory and compares the
 * generation it built them from with this row at most once a second, so a lost invalidation event
 * cannot keep stale catalogs for longer (docs/decisions.md "Catalog").
 */
@Entity({ name: 'catalog_generation' })
@Check('CHK_catalog_generation_single_row', '"id" = 1')
export class CatalogGenerationEntity {
  @PrimaryColumn({ type: 'smallint', default: 1 })
  id!: number;

  @Column({ type: 'bigint', default: 0 })
  generation!: string;
}
