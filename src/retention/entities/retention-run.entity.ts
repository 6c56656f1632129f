import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row per purged table (a `purge` of retention.map.ts): the lease that lets one instance at a
 * time purge it, and what its last run did. Written only by RetentionRepository.
 */
@Entity({ name: 'retention_run' })
export class RetentionRunEntity {
  @PrimaryColumn({ type: 'varchar', length: 64, primaryKeyConstraintName: 'PK_retention_run' })
  purge!: string;

  /** The run holding the lease (instance id and run number), or null. */
  @Column({ name: 'lease_owner', type: 'varchar', length: 64, nullable: true })
  leaseOwner!: string | null;

  /** Renewed by every batch; another instance takes the table over once it has passed (a run that died). */
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil!: Date | null;

  @Column({ name: 'last_started_at', type: 'timestamptz', nullable: true })
  lastStartedAt!: Date | null;

  @Column({ name: 'last_finished_at', type: 'timestamptz', nullable: true })
  lastFinishedAt!: Date | null;

  /** `ok`, `error` or `stopped` (the instance stopped, or lost the lease, mid-run). */
  @Column({ name: 'last_outcome', type: 'varchar', length: 16, nullable: true })
  lastOutcome!: string | null;

  @Column({ name: 'last_deleted', type: 'bigint', nullable: true })
  lastDeleted!: string | null;

  @Column({ name: 'last_batches', type: 'int', nullable: true })
  lastBatches!: number | null;

  @Column({ name: 'last_instance', type: 'varchar', length: 64, nullable: true })
  lastInstance!: string | null;

  @Column({ name: 'last_error', type: 'varchar', length: 256, nullable: true })
  lastError!: string | null;
}
