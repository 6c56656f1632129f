import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { RankSourceRepository } from './rank-source.repository';

/**
 * The ban generation, for writers outside ranking (the upload, the recompute): when a banned
 * player's rank keys change, every instance's ban view (ban-view.ts) must reload. In the caller's
 * transaction, so the bump commits with the keys it covers.
 */
@Injectable()
export class RankBansService {
  constructor(private readonly sources: RankSourceRepository) {}

  /** Marks every ban view stale: a banned player's keys changed in this transaction. */
  bumpGeneration(manager: EntityManager): Promise<void> {
    return this.sources.bumpBanGeneration(manager);
  }

  /** bumpGeneration when any of `uids` is under an active ban (none: no write). */
  async bumpIfAnyBanned(uids: string[], manager: EntityManager): Promise<void> {
    if ((await this.sources.activelyBanned(uids, manager)).length > 0) await this.sources.bumpBanGeneration(manager);
  }
}
