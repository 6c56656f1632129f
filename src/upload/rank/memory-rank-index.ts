import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { toTenThousandths } from '../rating';
import { RankSourceRepository } from '../rank-source.repository';
import type { IndexedPositions, PlayerRankState, RankChange, TrackPosition } from '../upload.types';
import { OrderStatisticSet } from './order-statistic-set';
import { IndexWindow, IndexWindowRead, RankIndex, RankIndexStats, StageRankChanges } from './rank-index';
import { ReadWriteGate } from './read-write-gate';
import { WriterLock } from './writer-lock';

const PAGE = 20_000;
const REBUILD_RETRY_MS = 5_000;

/**
 * The rank index kept in this process (no REDIS_URL): one OrderStatisticSet for the site order
 * (key: −ATP, 0, uid) and one per chart (key: −acc, first reached, uid).
 *
 * It is exact only while this process is the one writer of the database:
 * - embedded database: guaranteed, the data dir admits one process;
 * - PostgreSQL: the instance holds a session advisory lock for its whole life; a second instance
 *   without Redis waits for it at start (and instances with Redis take it shared), so two
 *   processes never write ratings with one of them keeping a private index.
 * Changes are applied inside the writing transaction, after its last write and before COMMIT,
 * while the player's rating row is locked: the index sees each player's changes in commit order.
 * A transaction that fails after staging (its commit outcome unknown) makes the index rebuild from
 * the tables, under the exclusive side of a gate that every write holds shared (retried until the
 * database answers). Losing the lock's connection (a database outage) switches to SQL counts until
 * the lock is taken again, then the index is rebuilt: no restart needed.
 */
@Injectable()
export class MemoryRankIndex extends RankIndex implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly kind = 'memory' as const;
  private readonly logger = new Logger('RankIndex');
  private readonly gate = new ReadWriteGate();
  private site = new OrderStatisticSet();
  private tracks = new Map<number, OrderStatisticSet>();
  private ready = false;
  private lock: WriterLock | null = null;
  private closing = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: RankSourceRepository,
  ) {
    super();
  }

  /** Takes the writer lock (PostgreSQL) and loads the index before the service listens. */
  async onApplicationBootstrap(): Promise<void> {
    if (this.config.databaseUrl !== null) {
      this.lock = new WriterLock(
        this.config.databaseUrl,
        'exclusive',
        this.logger,
        {
          // Another instance may write from now on: answer from SQL until the lock is back.
          lost: (error) => {
            this.ready = false;
            this.logger.error(
              `Rank index writer lock lost (${error.message}); ranks are counted in SQL until it is taken again`,
            );
          },
          regained: () => {
            this.logger.log('Rank index writer lock taken again; reloading the index');
            this.rebuildInBackground();
          },
        },
        'Another instance writes ratings on this database; without REDIS_URL only one instance may run. Waiting for it to stop.',
      );
      await this.lock.acquire();
    }
    await this.rebuild();
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    await this.lock?.release();
  }

  async runWrite<T>(work: (stage: StageRankChanges) => Promise<T>): Promise<T> {
    return this.gate.runShared(async () => {
      let staged = false;
      const stage: StageRankChanges = (changes, state) => {
        if (!this.ready) return null;
        staged = true;
        for (const change of changes) this.apply(change);
        return state ? this.positionsOf(state) : null;
      };
      try {
        return await work(stage);
      } catch (error) {
        if (staged) {
          this.ready = false;
          this.logger.warn('A transaction failed after staging rank changes; rebuilding the rank index');
          this.rebuildInBackground();
        }
        throw error;
      }
    });
  }

  /**
   * After a write, what its stage answered. Otherwise (a read outside any write, or a write that
   * staged nothing because the index was not ready): the index as it stands, once it is ready again
   * (a rebuild runs alone and loads every commit before it).
   */
  positions(state: PlayerRankState, staged: IndexedPositions | null): Promise<IndexedPositions | null> {
    return Promise.resolve(staged ?? (this.ready ? this.positionsOf(state) : null));
  }

  /** The index as it stands (as positions() reads it outside a write): synchronous, so one snapshot. */
  window(read: IndexWindowRead): Promise<IndexWindow | null> {
    const set = read.levelId === null ? this.site : this.tracks.get(read.levelId);
    if (!this.ready || !set?.has(...read.key)) return Promise.resolve(null);
    const position = set.countBelow(...read.key);
    return Promise.resolve({
      position,
      ahead: set.slice(position - read.ahead, position),
      behind: set.slice(position + 1, position + 1 + read.behind),
    });
  }

  syncEntries(): Promise<void> {
    return Promise.resolve();
  }

  /** Loads both orders from the tables, with no write in flight. */
  async rebuild(): Promise<void> {
    await this.gate.runExclusive(async () => {
      this.ready = false;
      const started = Date.now();
      // Keys are collected per order and built sorted in one go (no per-key shifting).
      const siteKeys: number[] = [];
      for (let after = '0'; ;) {
        const page = await this.repository.pageRatings(after, PAGE);
        for (const row of page) siteKeys.push(-toTenThousandths(Number(row.atp)), 0, Number(row.uid));
        if (page.length < PAGE) break;
        after = page[page.length - 1].uid;
      }
      const trackKeys = new Map<number, number[]>();
      for (let after = { uid: '0', levelId: 0 }; ;) {
        const page = await this.repository.pageBests(after.uid, after.levelId, PAGE);
        for (const row of page) {
          let keys = trackKeys.get(row.levelId);
          if (!keys) trackKeys.set(row.levelId, (keys = []));
          keys.push(-row.acc, row.firstTimeMs, Number(row.uid));
        }
        if (page.length < PAGE) break;
        after = page[page.length - 1];
      }
      const site = OrderStatisticSet.fromTriples(Float64Array.from(siteKeys));
      const tracks = new Map<number, OrderStatisticSet>();
      for (const [levelId, keys] of trackKeys)
        tracks.set(levelId, OrderStatisticSet.fromTriples(Float64Array.from(keys)));
      this.site = site;
      this.tracks = tracks;
      this.ready = this.config.databaseUrl === null || this.lock?.held === true;
      this.logger.log(
        `Rank index loaded: ${site.size} ranked players, ${tracks.size} charts, in ${Date.now() - started} ms`,
      );
    });
  }

  /** Rebuilds until it succeeds (the database may be down right now); ranks come from SQL meanwhile. */
  stats(): Promise<RankIndexStats> {
    let chartEntries = 0;
    for (const track of this.tracks.values()) chartEntries += track.size;
    return Promise.resolve({ ready: this.ready, rankedPlayers: this.site.size, chartEntries });
  }

  private rebuildInBackground(): void {
    if (this.closing) return;
    this.rebuild().catch((error: unknown) => {
      this.logger.warn(
        `Rank index rebuild failed (${error instanceof Error ? error.message : String(error)}); retrying in ${REBUILD_RETRY_MS / 1000} s`,
      );
      setTimeout(() => this.rebuildInBackground(), REBUILD_RETRY_MS).unref();
    });
  }

  private apply(change: RankChange): void {
    const uid = Number(change.uid);
    if (change.site) {
      if (change.site.before !== null) this.site.delete(-change.site.before, 0, uid);
      if (change.site.after !== null) this.site.insert(-change.site.after, 0, uid);
    }
    for (const track of change.tracks) {
      const set = trackSet(this.tracks, track.levelId);
      if (track.before) set.delete(-track.before.acc, track.before.firstTimeMs, uid);
      if (track.after) set.insert(-track.after.acc, track.after.firstTimeMs, uid);
    }
  }

  private positionsOf(state: PlayerRankState): IndexedPositions {
    const uid = Number(state.uid);
    return {
      siteAhead: state.atpE4 === null ? null : this.site.countBelow(-state.atpE4, 0, uid),
      trackAhead: state.best === null ? null : trackAheadOf(this.tracks.get(state.levelId), state.best, uid),
    };
  }
}

function trackSet(tracks: Map<number, OrderStatisticSet>, levelId: number): OrderStatisticSet {
  let set = tracks.get(levelId);
  if (!set) tracks.set(levelId, (set = new OrderStatisticSet()));
  return set;
}

function trackAheadOf(set: OrderStatisticSet | undefined, best: TrackPosition, uid: number): number {
  return set ? set.countBelow(-best.acc, best.firstTimeMs, uid) : 0;
}
