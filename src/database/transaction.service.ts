import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

/**
 * The one way services run an atomic write: every query of the unit goes through the
 * manager passed to `fn` (on the embedded database a query outside it would wait forever).
 */
@Injectable()
export class TransactionService {
  constructor(private readonly dataSource: DataSource) {}

  run<T>(fn: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(fn);
  }
}
