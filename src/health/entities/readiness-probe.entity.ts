import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One row, written by every readiness check: the database takes a write (docs/decisions.md "Readiness"). */
@Entity({ name: 'readiness_probe' })
export class ReadinessProbeEntity {
  @PrimaryColumn({ type: 'smallint' })
  id!: number;

  @Column({ name: 'probed_at', type: 'timestamptz', default: () => 'now()' })
  probedAt!: Date;
}
