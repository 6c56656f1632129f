import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AdminAuditEntity } from './entities/admin-audit.entity';

export type NewAuditEntry = Pick<
  AdminAuditEntity,
  'action' | 'target' | 'summary' | 'requestId' | 'sourceAddress' | 'credential'
>;

@Injectable()
export class AuditRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async append(entry: NewAuditEntry): Promise<void> {
    await this.dataSource.query(
      'INSERT INTO admin_audit (action, target, summary, request_id, source_address, credential) VALUES ($1, $2, $3::jsonb, $4, $5, $6)',
      [
        entry.action,
        entry.target,
        JSON.stringify(entry.summary),
        entry.requestId,
        entry.sourceAddress,
        entry.credential,
      ],
    );
  }

  /** Newest first (id descending) before `beforeId`. */
  list(
    filter: { target?: string; action?: string },
    beforeId: string | undefined,
    limit: number,
  ): Promise<AdminAuditEntity[]> {
    const query = this.dataSource
      .getRepository(AdminAuditEntity)
      .createQueryBuilder('a')
      .orderBy('a.id', 'DESC')
      .limit(limit);
    if (filter.target !== undefined) query.andWhere('a.target = :target', { target: filter.target });
    if (filter.action !== undefined) query.andWhere('a.action = :action', { action: filter.action });
    if (beforeId !== undefined) query.andWhere('a.id < :before', { before: beforeId });
    return query.getMany();
  }
}
