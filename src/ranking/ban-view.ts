import { Injectable } from '@nestjs/common';
import { toTenThousandths } from './rating-scale';
import { RankSourceRepository } from './rank-source.repository';
import type { PlayerRankState } from './ranking.types';
import { OrderStatisticSet } from './rank-index/order-statistic-set';
import { RankKey, siteKey, trackKey } from './rank-index/rank-index';

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
 *
 * The same keys are also kept per home server, for the scoped boards (a group's or a country's:
 * rows ahead in the scope minus banned players ahead in it). A banned player's home does not move
 * while the view holds it: a login moves the home only after its ban check, both under the player
 * row's lock, which a ban takes too (so a ban commits before the login's check or after its move).
 */
@Injectable()
export class BanView {
  private generation = -1;
  private validUntilMs = Number.POSITIVE_INFINITY;
  private site = new OrderStatisticSet();
  private tracks = new Map<number, OrderStatisticSet>();
  /** The same keys by home server (players without one are in no scope). */
  private siteByHome = new Map<number, OrderStatisticSet>();
  /** levelId → home server → keys. */
  private tracksByHome = new Map<number, Map<number, OrderStatisticSet>>();
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

  /**
   * Banned players ahead of `key` whose home server is one of `servers` (a scoped board), in the
   * site order (levelId null) or chart `levelId`'s. A server named twice counts once.
   */
  bannedAheadIn(servers: readonly number[], levelId: number | null, key: RankKey): number {
    const byHome = levelId === null ? this.siteByHome : this.tracksByHome.get(levelId);
    if (!byHome) return 0;
    let ahead = 0;
    for (const server of new Set(servers)) ahead += byHome.get(server)?.countBelow(...key) ?? 0;
    return ahead;
  }

  /** Whether the player at `key` of the site order (levelId null) or of chart `levelId` is under an active ban. */
  banned(levelId: number | null, key: RankKey): boolean {
    const set = levelId === null ? this.site : this.tracks.get(levelId);
    return set?.has(...key) ?? false;
  }

  private async load(): Promise<void> {
    const keys = await this.repository.bannedKeys();
    const site = new Triples<null>();
    const siteByHome = new Triples<number>();
    for (const s of keys.sites) {
      const key = siteKey(toTenThousandths(Number(s.atp)), s.uid);
      site.add(null, key);
      if (s.home !== null) siteByHome.add(s.home, key);
    }
    const tracks = new Triples<number>();
    const tracksByHome = new Map<number, Triples<number>>();
    for (const t of keys.tracks) {
      const key = trackKey(t.acc, t.firstTimeMs, t.uid);
      tracks.add(t.levelId, key);
      if (t.home === null) continue;
      let byHome = tracksByHome.get(t.levelId);
      if (!byHome) tracksByHome.set(t.levelId, (byHome = new Triples<number>()));
      byHome.add(t.home, key);
    }
    this.site = site.sets().get(null) ?? new OrderStatisticSet();
    this.tracks = tracks.sets();
    this.siteByHome = siteByHome.sets();
    this.tracksByHome = new Map([...tracksByHome].map(([levelId, byHome]) => [levelId, byHome.sets()]));
    this.generation = keys.generation;
    this.validUntilMs = keys.firstUntilMs ?? Number.POSITIVE_INFINITY;
  }
}

/** Rank keys grouped by a key (a chart, a home server), built into one OrderStatisticSet each. */
class Triples<K> {
  private readonly groups = new Map<K, number[]>();

  add(group: K, key: RankKey): void {
    let triples = this.groups.get(group);
    if (!triples) this.groups.set(group, (triples = []));
    triples.push(...key);
  }

  sets(): Map<K, OrderStatisticSet> {
    return new Map(
      [...this.groups].map(([group, triples]) => [group, OrderStatisticSet.fromTriples(Float64Array.from(triples))]),
    );
  }
}
