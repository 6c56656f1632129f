import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { isDeadlock } from '../../database/pg-errors';
import { TransactionService } from '../../database/transaction.service';
import { RecomputeResponse } from '../dto/upload.response';
import { RankIndex, RankBansService } from '../../ranking';
import { RatingRepository } from '../rating.repository';
import { PeriodRecountRepository } from '../review/period-recount.repository';
import { diffBests } from './bests-diff';

/** Players per recompute transaction: short transactions, so the embedded database keeps serving. */
export const RECOMPUTE_BATCH = 500;
/**
 * Times a batch runs when PostgreSQL cancels it to break a deadlock (40P01, rolled back whole):
 * its rating-row locks (missing rows inserted, then all locked in uid order) can meet a batch of
 * uploads that locks one of them and then waits on a row the recompute inserted. A batch is
 * idempotent, so it runs again.
 */
export const RECOMPUTE_BATCH_ATTEMPTS = 3;

/**
 * Bests and ATP again from the stored counted records: every player (POST /admin/ratings/recompute,
 * after chart constants change) or one player after a review action changed what counts.
 */
@Injectable()
export class RatingRecomputeService {
  constructor(
    private readonly ratings: RatingRepository,
    private readonly rankBans: RankBansService,
    private readonly index: RankIndex,
    private readonly tx: TransactionService,
    private readonly periods: PeriodRecountRepository,
  ) {}

  /**
   * Every player with a stored record, RECOMPUTE_BATCH players per transaction (uid order, each
   * batch locking its players' rating rows, so uploads in between stay correct): all-time bests and
   * ATP, and the same players' bests and ATP in every open period (a chart defined since a play of
   * it, or a constant changed, moves the day, week, month and season boards too).
   */
  async recomputeAll(): Promise<RecomputeResponse> {
    const totals: RecomputeResponse = { players: 0, bests: 0, atpChanged: 0, batches: 0 };
    for (let after = '0'; ;) {
      const uids = await this.ratings.nextPlayersWithRecords(after, RECOMPUTE_BATCH);
      if (uids.length === 0) break;
      const batch = await this.runBatch(uids);
      totals.players += uids.length;
      totals.bests += batch.bests;
      totals.atpChanged += batch.atpChanged;
      totals.batches++;
      after = uids[uids.length - 1];
    }
    return totals;
  }

  /** One batch of recomputeAll, run again (up to RECOMPUTE_BATCH_ATTEMPTS) when a deadlock cancelled it. */
  private async runBatch(uids: string[]): Promise<{ bests: number; atpChanged: number }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.recomputePlayers(uids, (manager) => this.periods.recount(uids, null, manager));
      } catch (error) {
        if (!isDeadlock(error) || attempt >= RECOMPUTE_BATCH_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * One transaction: locks the players' rating rows (uid order), runs `change` (a review action's
   * write), then writes their bests and ATP as the counted records give them; the rank index
   * learns the difference (staged in the transaction in process, written after the commit in Redis).
   */
  async recomputePlayers<T = undefined>(
    uids: string[],
    change?: (manager: EntityManager) => Promise<T>,
  ): Promise<{ changed: T | undefined; bests: number; atpChanged: number }> {
    const outcome = await this.index.runWrite(uids, (write) =>
      this.tx.run(async (manager) => {
        const ratings = await this.ratings.lockRatings(uids, manager);
        const changed = change ? await change(manager) : undefined;
        const computed = await this.ratings.computeBests(uids, manager);
        const stored = await this.ratings.readBests(uids, manager);
        const versions = await this.ratings.nextVersions(uids.length, manager);
        const diff = diffBests({ uids, ratings, computed, stored, versions });
        await this.ratings.replaceBests(diff.upserts, diff.removed, manager);
        await this.ratings.replaceRatings(diff.updates, diff.unranked, manager);
        // The ban views hold banned players' keys: if one of them changed, every view must reload.
        await this.rankBans.bumpIfAnyBanned(
          diff.changes.map((c) => c.uid),
          manager,
        );
        write.stage(diff.changes, null);
        return { changed, diff, bests: computed.length };
      }),
    );
    await this.index.syncEntries(outcome.diff.entries);
    return { changed: outcome.changed, bests: outcome.bests, atpChanged: outcome.diff.atpChanged };
  }

  /**
   * Erasure (docs/decisions.md "Erasing a player"): one transaction that runs `check` (the player
   * exists, the confirmation holds; no row lock), locks the player's rating row, runs `erase` (which
   * locks the player row and deletes their bests, rating and records with everything else of
   * theirs), and tells the rank index that each of their entries is gone, as a recompute that found
   * no counted play would: staged in process, written to Redis after the commit (so every instance
   * sharing it drops the player). The ban views reload through the ban generation the deletion of
   * player_ban bumps. The rating row is locked before the player row, the order of an upload (its
   * rating row, then its insert's key share on the player row), so the two never deadlock.
   */
  async removePlayer<T>(
    uid: string,
    steps: { check(manager: EntityManager): Promise<void>; erase(manager: EntityManager): Promise<T> },
  ): Promise<T> {
    const outcome = await this.index.runWrite([uid], (write) =>
      this.tx.run(async (manager) => {
        await steps.check(manager);
        const ratings = await this.ratings.lockRatings([uid], manager);
        const stored = await this.ratings.readBests([uid], manager);
        const versions = await this.ratings.nextVersions(1, manager);
        const diff = diffBests({ uids: [uid], ratings, computed: [], stored, versions });
        const erased = await steps.erase(manager);
        write.stage(diff.changes, null);
        return { erased, diff };
      }),
    );
    await this.index.syncEntries(outcome.diff.entries);
    return outcome.erased;
  }
}
