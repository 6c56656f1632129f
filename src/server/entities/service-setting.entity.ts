import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** Service-wide settings changed through the admin API (maintenance, plugin policy). */
@Entity({ name: 'service_setting' })
export class ServiceSettingEntity {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  key!: string;

  @Column({ type: 'jsonb' })
  value!: object;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
