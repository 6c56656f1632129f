import { Injectable } from '@nestjs/common';
import { toTenThousandths } from './rating-scale';
import { RankSourceRepository } from './rank-source.repository';
import type { PlayerRankState } from './ranking.types';
import { OrderStatisticSet } from './rank-index/order-statistic-set';
import type { RankKey } from './rank-index/rank-index';

/**
 * This instance's view of the players under an active ban: their rank keys in the same orders as
 * the rank index (site: −ATP, 0, uid; per chart: −acc, first reached, uid), so that "banned
 * players ahead" is an O(log b) count instead of a join per upload.
 *
 * The view is exact while it has seen the database's ban generation (bumped in the transaction of
 * every change of player_ban, and by Upload when a banned player's keys change) and none of its
 * bans has run out; every upload reads both facts in its first statement and calls ensure(), which
 * reloads the view (one statement) when either is stale. So a ban, an unban and a ban running out
 * all count from the next answer on, without any event.
 */
@Injectable()
export class BanView {
  private generation = -1;
  private validUntilMs = Number.POSITIVE_INFINITY;
  private site = new OrderStatisticSet();
  private tracks = new Map<number, OrderStatisticSet>();
  private loading: Promise<void> | null = null;

  constructor(private readonly repository: RankSourceRepository) {}

  /** Makes the view current for an upload that saw `generation` at database time `dbNowMs`. */
  async ensure(generation: number, dbNowMs: number): Promise<void> {
    while (this.generation < generation || dbNowMs >= this.validUntilMs) {
      this.loading ??= this.load().finally(() => (this.loading = null));
      await this.loading;
    }
  }

  /** Banned players ahead of the player's positions (the player is not banned: a banned player has no rank). */
  bannedAhead(state: PlayerRankState): { siteAhead: number; trackAhead: number } {
    const uid = Number(state.uid);
    return {
      siteAhead: state.atpE4 === null ? 0 : this.site.countBelow(-state.atpE4, 0, uid),
      trackAhead:
        state.best === null
          ? 0
          : (this.tracks.get(state.levelId)?.countBelow(-state.best.acc, state.best.firstTimeMs, uid) ?? 0),
    };
  }

  /** Whether the player at `key` of the site order (levelId null) or of chart `levelId` is under an active ban. */
  banned(levelId: number | null, key: RankKey): boolean {
    const set = levelId === null ? this.site : this.tracks.get(levelId);
    return set?.has(...key) ?? false;
  }

  private async load(): Promise<void> {
    const keys = await this.repository.bannedKeys();
    const site = OrderStatisticSet.fromTriples(
      Float64Array.from(keys.sites.flatMap((s) => [-toTenThousandths(Number(s.atp)), 0, Number(s.uid)])),
    );
    const byLevel = new Map<number, number[]>();
    for (const t of keys.tracks) {
      let triples = byLevel.get(t.levelId);
      if (!triples) byLevel.set(t.levelId, (triples = []));
      triples.push(-t.acc, t.firstTimeMs, Number(t.uid));
    }
    const tracks = new Map<number, OrderStatisticSet>();
    for (const [levelId, triples] of byLevel)
      tracks.set(levelId, OrderStatisticSet.fromTriples(Float64Array.from(triples)));
    this.site = site;
    this.tracks = tracks;
    this.generation = keys.generation;
    this.validUntilMs = keys.firstUntilMs ?? Number.POSITIVE_INFINITY;
  }
}
