import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row: a counter bumped in the same transaction as every change of `resource_file`, so any
 * instance can tell with one cheap query whether the manifest it holds in memory is current.
 */
@Entity({ name: 'resource_index_state' })
@Check('CHK_resource_index_state_single_row', `"id" = 1`)
export class ResourceIndexStateEntity {
  @PrimaryColumn({ type: 'smallint' })
  id!: number;

  /** bigint, read as a string. */
  @Column({ type: 'bigint' })
  version!: string;

  @Column({ name: 'changed_at', type: 'timestamptz' })
  changedAt!: Date;
}
