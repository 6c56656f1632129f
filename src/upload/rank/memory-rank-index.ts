import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { RankSourceRepository, TrackOrderRow } from '../rank-source.repository';
import type { IndexedPositions, PlayerRankState, RankChange, TrackPosition } from '../upload.types';
import { openRankIndexSnapshot, writeRankIndexSnapshot } from './rank-index-snapshot';
import { CHART_KEY_CODEC, SITE_KEY_CODEC } from './rank-key-codec';
import { RankKeySet, RankKeySetBuilder } from './rank-key-set';
import { IndexWindow, IndexWindowRead, RankIndex, RankIndexStats, RankWrite } from './rank-index';
import { KeyedQueue } from './keyed-queue';
import { ReadWriteGate } from './read-write-gate';
import { WriterLock } from './writer-lock';

const PAGE = 20_000;
const REBUILD_RETRY_MS = 5_000;
/** More players changed since the snapshot than this: a full load is about as fast as catching up. */
const MAX_CATCH_UP = 50_000;
/** Changed players read per statement while catching up. */
const CATCH_UP_BATCH = 2_000;
export const SNAPSHOT_FILE = 'rank-index.snapshot';

/**
 * The rank index kept in this process (no REDIS_URL): one OrderStatisticSet for the site order
 * (key: −ATP, 0, uid) and one per chart (key: −acc, first reached, uid).
 *
 * It is exact only while this process is the one writer of the database:
 * - embedded database: guaranteed, the data dir admits one process;
 * - PostgreSQL: the instance holds a session advisory lock for its whole life; a second instance
 *   without Redis waits for it at start (and instances with Redis take it shared), so two
 *   processes never write ratings with one of them keeping a private index.
 * Changes are applied by the write that made them: inside a transaction after its last write and
 * before COMMIT (the rating row still locked), or right after the one-statement upload returns.
 * The writes of one player run one after the other in this process (a KeyedQueue by uid), so
 * either way the index sees each player's changes in commit order.
 * A transaction that fails after staging (its commit outcome unknown) makes the index rebuild from
 * the tables, under the exclusive side of a gate that every write holds shared (retried until the
 * database answers). Losing the lock's connection (a database outage) switches to SQL counts until
 * the lock is taken again, then the index is rebuilt: no restart needed.
 *
 * Memory and start-up (docs/decisions.md "Rank index at start-up"): keys are packed into 12 bytes
 * (RankKeySet); a load streams the rows in rank order straight into blocks. At shutdown and after a
 * full load the index is written to DATA_DIR/rank-index.snapshot with the change watermark read
 * under the exclusive gate; a start reads it and re-reads only the players whose rating row was
 * written or deleted after that watermark.
 */
@Injectable()
export class MemoryRankIndex
  extends RankIndex
  implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  readonly kind = 'memory' as const;
  private readonly logger = new Logger('RankIndex');
  private readonly gate = new ReadWriteGate();
  private readonly players = new KeyedQueue();
  private site = new RankKeySet(SITE_KEY_CODEC);
  private tracks = new Map<number, RankKeySet>();
  private ready = false;
  private lock: WriterLock | null = null;
  private closing = false;
  /** The snapshot file, null when snapshots are off (DATA_DIR not writable). */
  private snapshotPath: string | null;
  private wideLogged = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: RankSourceRepository,
  ) {
    super();
    this.snapshotPath = join(config.dataDir, SNAPSHOT_FILE);
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
    let loaded = false;
    await this.gate.runExclusive(async () => {
      loaded = await this.loadSnapshot();
      if (!loaded) await this.loadTables();
    });
    if (!loaded) this.saveInBackground();
  }

  /**
   * Writes the snapshot while the database is still open (in-flight writes finish first), its
   * blocks packed afresh: the next start has a load's density back (7.7 B a key, against ~9.7
   * after a few per cent of new bests split blocks), for 1.5 s instead of 0.3 at 10M keys.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.saveSnapshot({ repack: true }).catch((error: unknown) => this.snapshotFailed(error));
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    await this.lock?.release();
  }

  runWrite<T>(uids: readonly string[], work: (write: RankWrite) => Promise<T>): Promise<T> {
    return this.players.run(uids, () => this.writeUnit(work));
  }

  private writeUnit<T>(work: (write: RankWrite) => Promise<T>): Promise<T> {
    return this.gate.runShared(async () => {
      let uncertain = false;
      const write: RankWrite = {
        stage: (changes, state) => {
          if (!this.ready) return null;
          uncertain = true;
          for (const change of changes) this.apply(change);
          return state ? this.positionsOf(state) : null;
        },
        outcomeUnknown: () => {
          uncertain = true;
        },
      };
      try {
        return await work(write);
      } catch (error) {
        // Staged before a commit that failed, or committed without staging: the tables decide.
        if (uncertain) {
          this.ready = false;
          this.logger.warn(
            'A write failed after staging rank changes or with an unknown outcome; rebuilding the rank index',
          );
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

  /** Loads both orders from the tables, with no write in flight; then writes a snapshot. */
  async rebuild(): Promise<void> {
    await this.gate.runExclusive(() => this.loadTables());
    this.saveInBackground();
  }

  /**
   * Writes the index and the change watermark to the snapshot file, under the exclusive gate (no
   * write in flight, so the index is exactly the tables at that watermark). Nothing when the index
   * is not ready or snapshots are off. `repack`: the blocks packed afresh (writeRankIndexSnapshot).
   */
  async saveSnapshot({ repack = false }: { repack?: boolean } = {}): Promise<void> {
    const path = this.snapshotPath;
    if (path === null) return;
    await this.gate.runExclusive(async () => {
      if (!this.ready) return;
      const started = Date.now();
      const { watermark, ...identity } = await this.repository.snapshotIdentity();
      mkdirSync(this.config.dataDir, { recursive: true });
      const snapshot = { identity, watermark, site: this.site, tracks: this.tracks };
      const bytes = await writeRankIndexSnapshot(path, snapshot, { repack });
      this.logger.log(
        `Rank index snapshot written${repack ? ' (repacked)' : ''}: ${(bytes / 2 ** 20).toFixed(1)} MiB at watermark ${watermark}, in ${Date.now() - started} ms`,
      );
    });
  }

  /** Streams both orders from the tables in rank order into compact sets (the caller holds the exclusive gate). */
  private async loadTables(): Promise<void> {
    this.ready = false;
    const started = Date.now();
    // The old sets go first, so a reload never holds two indexes.
    this.site = new RankKeySet(SITE_KEY_CODEC);
    this.tracks = new Map();
    const site = new RankKeySetBuilder(SITE_KEY_CODEC);
    for (let after: { atpE4: number; uid: number } | null = null; ;) {
      const page = await this.repository.pageSiteOrder(after, PAGE);
      for (let i = 0; i < page.count; i++) site.append(-page.atpE4(i), 0, page.uid(i));
      if (page.count < PAGE) break;
      after = { atpE4: page.atpE4(page.count - 1), uid: page.uid(page.count - 1) };
    }
    const tracks = new Map<number, RankKeySet>();
    // Rows come chart by chart: one builder at a time.
    let levelId = -1;
    let builder = null as RankKeySetBuilder | null;
    for (let after: TrackOrderRow | null = null; ;) {
      const page = await this.repository.pageTrackOrder(after, PAGE);
      for (let i = 0; i < page.count; i++) {
        if (builder === null || levelId !== page.levelId(i)) {
          if (builder) tracks.set(levelId, builder.finish());
          levelId = page.levelId(i);
          builder = new RankKeySetBuilder(CHART_KEY_CODEC);
        }
        builder.append(-page.acc(i), page.firstTimeMs(i), page.uid(i));
      }
      if (page.count < PAGE) break;
      after = page.row(page.count - 1);
    }
    if (builder) tracks.set(levelId, builder.finish());
    this.site = site.finish();
    this.tracks = tracks;
    this.ready = this.config.databaseUrl === null || this.lock?.held === true;
    this.logger.log(`Rank index loaded from the tables: ${this.describe()}, in ${Date.now() - started} ms`);
  }

  /**
   * Loads the snapshot and catches up with the players changed after its watermark (the caller
   * holds the exclusive gate). false when there is no usable snapshot: the caller loads the tables.
   */
  private async loadSnapshot(): Promise<boolean> {
    const path = this.snapshotPath;
    if (path === null) return false;
    const started = Date.now();
    const { watermark: now, ...identity } = await this.repository.snapshotIdentity();
    const opened = await openRankIndexSnapshot(path, identity);
    if (typeof opened === 'string') {
      this.logger.log(`Rank index snapshot not used (${opened}); loading from the tables`);
      return false;
    }
    // The queries run while the file is read.
    const queries = Promise.all([
      this.repository.changedSince(opened.watermark, MAX_CATCH_UP),
      this.repository.rankRowCounts(),
    ]);
    queries.catch(() => undefined);
    const snapshot = await opened.read();
    const [changed, counts] = await queries;
    if (typeof snapshot === 'string') {
      this.logger.log(`Rank index snapshot not used (${snapshot}); loading from the tables`);
      return false;
    }
    if (BigInt(opened.watermark) > BigInt(now)) {
      this.logger.warn('Rank index snapshot is ahead of the database (restored?); loading from the tables');
      return false;
    }
    if (changed.length > MAX_CATCH_UP) {
      this.logger.log(`Over ${MAX_CATCH_UP} players changed since the rank index snapshot; loading from the tables`);
      return false;
    }
    const { site, tracks } = snapshot;
    if (changed.length > 0) {
      const uids = new Set(changed.map(Number));
      const drop = (uid: number) => uids.has(uid);
      site.removeUids(drop);
      for (const track of tracks.values()) track.removeUids(drop);
      for (let at = 0; at < changed.length; at += CATCH_UP_BATCH) {
        const keys = await this.repository.rankKeysOf(changed.slice(at, at + CATCH_UP_BATCH));
        for (let i = 0; i < keys.sites.count; i++) site.insert(-keys.sites.atpE4(i), 0, keys.sites.uid(i));
        const rows = keys.tracks;
        for (let i = 0; i < rows.count; i++)
          trackSet(tracks, rows.levelId(i)).insert(-rows.acc(i), rows.firstTimeMs(i), rows.uid(i));
      }
    }
    // A last guard against a snapshot of another state of the data: the index holds every row.
    let entries = 0;
    for (const track of tracks.values()) entries += track.size;
    if (site.size !== counts.ratings || entries !== counts.bests) {
      this.logger.warn(
        `Rank index snapshot does not match the tables (${site.size}/${counts.ratings} players, ${entries}/${counts.bests} bests); loading from the tables`,
      );
      return false;
    }
    this.site = site;
    this.tracks = tracks;
    this.ready = this.config.databaseUrl === null || this.lock?.held === true;
    this.logger.log(
      `Rank index loaded from the snapshot at watermark ${opened.watermark} and ${changed.length} players changed since: ${this.describe()}, in ${Date.now() - started} ms`,
    );
    return true;
  }

  /** Writes a snapshot after a full load, when writes may already run (they wait for the gate meanwhile). */
  private saveInBackground(): void {
    if (this.closing) return;
    this.saveSnapshot().catch((error: unknown) => this.snapshotFailed(error));
  }

  /** A snapshot that cannot be written turns snapshots off (logged once); the index itself is unaffected. */
  private snapshotFailed(error: unknown): void {
    if (this.snapshotPath === null) return;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EROFS' || code === 'EPERM' || code === 'ENOSPC') {
      this.logger.warn(
        `Rank index snapshot cannot be written in ${this.config.dataDir} (${code}); running without snapshots (every start loads the tables)`,
      );
      this.snapshotPath = null;
    } else {
      this.logger.warn(`Rank index snapshot not written (${error instanceof Error ? error.message : String(error)})`);
    }
  }

  /** What the index holds, for the load log. */
  private describe(): string {
    let entries = 0;
    let bytes = this.site.bytes;
    let wide = this.site.wideSize;
    for (const track of this.tracks.values()) {
      entries += track.size;
      bytes += track.bytes;
      wide += track.wideSize;
    }
    const keys = this.site.size + entries;
    if (wide > 0) this.noteWide();
    const memory = process.memoryUsage();
    const mib = (n: number) => (n / 2 ** 20).toFixed(1);
    return `${this.site.size} ranked players, ${entries} chart entries on ${this.tracks.size} charts, ${mib(bytes)} MiB of keys (${keys ? (bytes / keys).toFixed(2) : 0} B a key, ${wide} kept wide); process: ${mib(memory.rss)} MiB resident, JS heap ${mib(memory.heapUsed)} of ${mib(memory.heapTotal)} MiB`;
  }

  /** Logged once: keys that do not pack are exact but cost 24 bytes. */
  private noteWide(): void {
    if (this.wideLogged) return;
    this.wideLogged = true;
    this.logger.log(
      'Some rank keys do not pack into 12 bytes (acc with more than 4 decimals, uid >= 2^32 or a time outside 2000-2557); they are kept exactly at 24 bytes a key',
    );
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
      if (!this.wideLogged && set.wideSize > 0) this.noteWide();
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

function trackSet(tracks: Map<number, RankKeySet>, levelId: number): RankKeySet {
  let set = tracks.get(levelId);
  if (!set) tracks.set(levelId, (set = new RankKeySet(CHART_KEY_CODEC)));
  return set;
}

function trackAheadOf(set: RankKeySet | undefined, best: TrackPosition, uid: number): number {
  return set ? set.countBelow(-best.acc, best.firstTimeMs, uid) : 0;
}
