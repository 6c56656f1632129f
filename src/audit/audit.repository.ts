import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AdminAuditEntity } from './entities/admin-audit.entity';

export type NewAuditEntry = Pick<
  AdminAuditEntity,
  'action' | 'target' | 'summary' | 'requestId' | 'sourceAddress' | 'credential' | 'actor' | 'actorId'
>;

@Injectable()
export class AuditRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** With `manager`, inside that transaction (a sign-in's row commits with its session). */
  async append(entry: NewAuditEntry, manager?: EntityManager): Promise<void> {
    await (manager ?? this.dataSource.manager).query(
      'INSERT INTO admin_audit (action, target, summary, request_id, source_address, credential, actor, actor_id) VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $8)',
      [
        entry.action,
        entry.target,
        JSON.stringify(entry.summary),
        entry.requestId,
        entry.sourceAddress,
        entry.credential,
        entry.actor,
        entry.actorId,
      ],
    );
  }

  /** Newest first (id descending) before `beforeId`. */
  list(
    filter: { target?: string; action?: string; actor?: string },
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
    if (filter.actor !== undefined) query.andWhere('a.actor = :actor', { actor: filter.actor });
    if (beforeId !== undefined) query.andWhere('a.id < :before', { before: beforeId });
    return query.getMany();
  }
}
