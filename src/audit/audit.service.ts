import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ListQuery, toPage } from '../common/pagination/list-query';
import { formatLocalDateTime } from '../common/time';
import { NewAuditEntry, AuditRepository } from './audit.repository';
import { AuditPage } from './dto/audit.dto';

export const AUDIT_LIST = 'audit';

export interface AuditFilters {
  target: string;
  action: string;
  actor: string;
}

@Injectable()
export class AuditService {
  constructor(private readonly audit: AuditRepository) {}

  /** One row; with `manager`, inside that transaction. */
  append(entry: NewAuditEntry, manager?: EntityManager): Promise<void> {
    return this.audit.append(entry, manager);
  }

  async list(query: ListQuery<AuditFilters>): Promise<AuditPage> {
    const rows = await this.audit.list(query.filters, query.after, query.limit + 1);
    return toPage(
      rows,
      query,
      AUDIT_LIST,
      (row) => row.id,
      (row) => ({
        id: Number(row.id),
        time: formatLocalDateTime(row.at),
        action: row.action,
        target: row.target,
        summary: row.summary,
        requestId: row.requestId,
        sourceAddress: row.sourceAddress,
        credential: row.credential,
        actor: row.actor,
        actorId: row.actorId,
      }),
    );
  }
}
