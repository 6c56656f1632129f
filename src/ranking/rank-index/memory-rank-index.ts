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
import { freeBytes } from '../../common/free-space';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { RankSourceRepository } from '../rank-source.repository';
import type { TrackOrderRow } from '../rank-source-pages';
import type { IndexedPositions, PlayerRankState, RankChange, TrackPosition } from '../ranking.types';
import { openRankIndexSnapshot, writeRankIndexSnapshot } from './rank-index-snapshot';
import { CHART_KEY_CODEC, SITE_KEY_CODEC } from './rank-key-codec';
import { RankKeySet, RankKeySetBuilder } from './rank-key-set';
import { IndexWindow, IndexWindowRead, RankIndex, RankIndexStats, RankWrite, TrackRead } from './rank-index';
import { KeyedQueue } from './keyed-queue';
import { ReadWriteGate } from './read-write-gate';
import { WriterLock } from './writer-lock';

const PAGE = 20_000;
/** A repair that failed (the database is still down) is tried again after this. */
const REPAIR_RETRY_MS = 1_000;
/** A failing repair logs again at most this often. */
const REPAIR_LOG_EVERY_MS = 30_000;
/** More players changed since the snapshot or the watermark than this: a full load is about as fast as catching up. */
const MAX_CATCH_UP = 50_000;
/** Changed players read per statement while catching up. */
const CATCH_UP_BATCH = 2_000;
/** A repair re-reads at most this many players under the exclusive gate (writes wait); more: one more round outside it first. */
const LAST_ROUND_MAX = 2_000;
/** How often a ready index moves its watermark forward (a repair re-reads the players changed since). */
const WATERMARK_EVERY_MS = 60_000;
/** Free space a snapshot leaves in DATA_DIR: two WAL segments of the embedded database, which keeps its files there. */
const SNAPSHOT_RESERVE_BYTES = 32 * 2 ** 20;
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
 *
 * A write that fails after staging (its changes may not have committed), or whose outcome is
 * unknown (a lost answer), marks the index stale: ranks come from SQL, the write's players are
 * noted as in doubt, and a repair is asked for. One repair runs at a time; asking while one runs
 * makes one more run after it (docs/decisions.md "Rank index repairs"). A repair re-reads the
 * players changed after the index's watermark (the `rank_change_seq` value read when the index was
 * last exact, with no write in flight) plus those in doubt, mostly while writes go on (they do not
 * stage while the index is stale), and the last few under the exclusive side of a gate every write
 * holds shared; past MAX_CATCH_UP players it loads the tables instead, also while writes go on.
 * Losing the lock's connection (a database outage) switches to SQL counts until the lock is taken
 * again, then the index is repaired the same way: no restart needed.
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
  private readonly snapshotPath: string;
  /** The last snapshot failure's code, logged once until a snapshot is written again. */
  private snapshotFailure: string | null = null;
  private wideLogged = false;
  /**
   * A change watermark at which the index was exact (read with no write in flight): every later
   * change of a player's keys has a higher change_seq, or was staged into the index. null: unknown.
   */
  private watermark: string | null = null;
  /** Players whose staged changes may not have committed, or whose write's outcome is unknown. */
  private readonly doubt = new Set<string>();
  /** The repair loop while it runs (requestRepair). */
  private repairing: Promise<void> | null = null;
  /** Another repair was asked for (the loop runs once more). */
  private repairWanted = false;
  /** The next repair loads the tables whatever changed. */
  private fullLoadWanted = false;
  private watermarkTimer: NodeJS.Timeout | null = null;

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
            this.logger.log('Rank index writer lock taken again; repairing the index');
            this.requestRepair();
          },
        },
        'Another instance writes ratings on this database; without REDIS_URL only one instance may run. Waiting for it to stop.',
        this.config.databasePoolMode,
      );
      await this.lock.acquire();
    }
    let loaded = false;
    await this.gate.runExclusive(async () => {
      loaded = await this.loadSnapshot();
      if (!loaded) {
        const watermark = await this.repository.changeWatermark();
        await this.loadTables();
        this.watermark = watermark;
        this.ready = this.canAnswer();
      }
    });
    if (!loaded) this.saveInBackground();
    this.watermarkTimer = setInterval(() => this.advanceWatermark(), WATERMARK_EVERY_MS);
    this.watermarkTimer.unref();
  }

  /**
   * Writes the snapshot while the database is still open (in-flight writes finish first), its
   * blocks packed afresh: the next start has a load's density back (7.7 B a key, against ~9.7
   * after a few per cent of new bests split blocks), for 1.5 s instead of 0.3 at 10M keys.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.saveSnapshot({ repack: true }).catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    if (this.watermarkTimer) clearInterval(this.watermarkTimer);
    await this.lock?.release();
  }

  runWrite<T>(uids: readonly string[], work: (write: RankWrite) => Promise<T>): Promise<T> {
    return this.players.run(uids, () => this.writeUnit(uids, work));
  }

  private writeUnit<T>(uids: readonly string[], work: (write: RankWrite) => Promise<T>): Promise<T> {
    return this.gate.runShared(async () => {
      let inDoubt = false;
      const write: RankWrite = {
        stage: (changes, state) => {
          if (!this.ready) return null;
          inDoubt = true;
          for (const change of changes) this.apply(change);
          return state ? this.positionsOf(state) : null;
        },
        outcomeUnknown: () => {
          inDoubt = true;
        },
      };
      try {
        return await work(write);
      } catch (error) {
        // Staged before a commit that failed, or committed without staging: the tables decide.
        if (inDoubt) this.markStale(uids);
        throw error;
      }
    });
  }

  /** Ranks come from SQL until a repair has re-read `uids` (and whatever else changed). */
  private markStale(uids: readonly string[]): void {
    for (const uid of uids) this.doubt.add(uid);
    if (this.ready)
      this.logger.warn(
        `A write of ${uids.length === 1 ? `player ${uids[0]}` : `${uids.length} players`} failed after staging rank changes or with an unknown outcome; ranks are counted in SQL until the rank index is repaired`,
      );
    this.ready = false;
    this.requestRepair();
  }

  /**
   * After a write, what its stage answered. Otherwise (a read outside any write, or a write that
   * staged nothing because the index was not ready): the index as it stands, once it is ready again
   * (a rebuild runs alone and loads every commit before it).
   */
  positions(state: PlayerRankState, staged: IndexedPositions | null): Promise<IndexedPositions | null> {
    return Promise.resolve(staged ?? (this.ready ? this.positionsOf(state) : null));
  }

  /** The index as it stands, once it is ready (as positions() reads it outside a write): synchronous, so one snapshot. */
  trackPositions(uid: string, bests: readonly TrackRead[]): Promise<number[] | null> {
    if (!this.ready) return Promise.resolve(null);
    return Promise.resolve(bests.map(({ levelId, best }) => trackAheadOf(this.tracks.get(levelId), best, Number(uid))));
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

  /** Loads both orders from the tables (writes go on, ranks from SQL meanwhile); resolves once the index answers again. */
  async rebuild(): Promise<void> {
    this.fullLoadWanted = true;
    this.ready = false;
    this.requestRepair();
    await this.repairing;
  }

  /**
   * Asks for a repair: starts the loop, or makes the running one go round once more. The loop's
   * last check of `repairWanted` and its `repairing = null` run in one synchronous step, so a
   * request is never lost between them.
   */
  private requestRepair(): void {
    this.repairWanted = true;
    if (this.repairing === null && !this.closing) this.repairing = this.repairLoop();
  }

  private async repairLoop(): Promise<void> {
    let failures = 0;
    let loggedAt = 0;
    while (this.repairWanted && !this.closing) {
      this.repairWanted = false;
      try {
        if ((await this.repairOnce()) && failures > 0)
          this.logger.log(`Rank index repaired after ${failures} failed attempts`);
        failures = 0;
      } catch (error) {
        failures++;
        this.repairWanted = true;
        if (this.closing) break;
        if (Date.now() - loggedAt >= REPAIR_LOG_EVERY_MS) {
          loggedAt = Date.now();
          this.logger.warn(
            `Rank index repair failed (${error instanceof Error ? error.message : String(error)}); retrying every ${REPAIR_RETRY_MS / 1000} s, ranks are counted in SQL meanwhile`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, REPAIR_RETRY_MS).unref());
      }
    }
    this.repairing = null;
  }

  /**
   * Brings the stale index back to the tables: the players changed after the watermark and those in
   * doubt are re-read (or, past MAX_CATCH_UP of them, the tables loaded), first while writes go on,
   * then the last ones under the exclusive gate, where the index becomes exact and ready again.
   * true when it answers again.
   */
  private async repairOnce(): Promise<boolean> {
    // Without the writer lock the index may not answer anyway: the repair runs once it is taken
    // again (`regained` asks for one), so a database outage costs one repair, not two.
    if (!this.canAnswer()) return false;
    const started = Date.now();
    const fresh = () => this.gate.runExclusive(() => this.repository.changeWatermark());
    let base = this.watermark;
    let full = this.fullLoadWanted || base === null;
    let reread = 0;
    if (!full) {
      const next = await fresh();
      const players = await this.changedOrInDoubt(base as string);
      if (players === null) full = true;
      else {
        reread += await this.reread(players);
        base = next;
        if (players.length > LAST_ROUND_MAX) {
          // Many players: one more round outside the gate, so that the last one is short.
          const again = await fresh();
          const more = await this.changedOrInDoubt(base);
          if (more === null) full = true;
          else {
            reread += await this.reread(more);
            base = again;
          }
        }
      }
    }
    if (full) {
      this.fullLoadWanted = false;
      // Writes after this watermark (they stage nothing meanwhile) are re-read below.
      base = await fresh();
      this.doubt.clear();
      // The sets are emptied now: until this load is done, only another full load can repair them.
      this.watermark = null;
      await this.loadTables();
      const next = await fresh();
      const players = await this.changedOrInDoubt(base);
      if (players === null) {
        this.fullLoadWanted = true;
        throw new Error(`over ${MAX_CATCH_UP} players changed during the load`);
      }
      reread += await this.reread(players);
      base = next;
    }
    const last = base as string;
    await this.gate.runExclusive(async () => {
      const watermark = await this.repository.changeWatermark();
      const players = await this.changedOrInDoubt(last);
      if (players === null) {
        this.fullLoadWanted = true;
        this.repairWanted = true;
        return;
      }
      reread += await this.reread(players);
      this.watermark = watermark;
      this.ready = this.canAnswer();
    });
    if (!this.ready) return false;
    this.logger.log(
      `Rank index repaired${full ? ' by a full load' : ''}: ${reread} players re-read, in ${Date.now() - started} ms`,
    );
    if (full) this.saveInBackground();
    return true;
  }

  /** The players changed after `watermark` and those in doubt (taken), or null when over MAX_CATCH_UP. */
  private async changedOrInDoubt(watermark: string): Promise<string[] | null> {
    const doubt = [...this.doubt];
    this.doubt.clear();
    const changed = await this.repository.changedSince(watermark, MAX_CATCH_UP).catch((error: unknown) => {
      for (const uid of doubt) this.doubt.add(uid);
      throw error;
    });
    const players = new Set([...changed, ...doubt]);
    if (players.size > MAX_CATCH_UP) return null;
    return [...players];
  }

  /**
   * Replaces the keys of `uids` in the index by their rows in the tables; how many players. When
   * it fails half-way (their keys dropped, not read again) they go back into doubt, so the next
   * attempt re-reads them even if no change of theirs committed.
   */
  private async reread(uids: readonly string[]): Promise<number> {
    try {
      await catchUp(this.repository, this.site, this.tracks, uids);
    } catch (error) {
      for (const uid of uids) this.doubt.add(uid);
      throw error;
    }
    return uids.length;
  }

  /** Moves the watermark forward while the index is exact, so that a repair has few players to re-read. */
  private advanceWatermark(): void {
    if (!this.ready || this.repairing !== null || this.closing) return;
    this.gate
      .runExclusive(async () => {
        if (!this.ready) return;
        this.watermark = await this.repository.changeWatermark();
      })
      .catch(() => undefined);
  }

  /** The index may answer: the embedded database has one process; on PostgreSQL, while the writer lock is held. */
  private canAnswer(): boolean {
    return this.config.databaseUrl === null || this.lock?.held === true;
  }

  /**
   * Writes the index and the change watermark to the snapshot file, under the exclusive gate (no
   * write in flight, so the index is exactly the tables at that watermark). Nothing when the index
   * is not ready or snapshots are off. `repack`: the blocks packed afresh (writeRankIndexSnapshot).
   */
  async saveSnapshot({ repack = false }: { repack?: boolean } = {}): Promise<void> {
    const path = this.snapshotPath;
    await this.gate
      .runExclusive(async () => {
        if (!this.ready) return;
        const started = Date.now();
        const { watermark, ...identity } = await this.repository.snapshotIdentity();
        this.watermark = watermark;
        mkdirSync(this.config.dataDir, { recursive: true });
        const needed = this.keyBytes() + SNAPSHOT_RESERVE_BYTES;
        const free = await freeBytes(this.config.dataDir);
        if (free !== null && free < needed) {
          throw Object.assign(
            new Error(
              `it needs about ${mib(needed)} MiB with ${mib(SNAPSHOT_RESERVE_BYTES)} MiB left for the database, and ${this.config.dataDir} has ${mib(free)} MiB free`,
            ),
            { code: 'ENOSPC' },
          );
        }
        const snapshot = { identity, watermark, site: this.site, tracks: this.tracks };
        const bytes = await writeRankIndexSnapshot(path, snapshot, { repack });
        if (this.snapshotFailure !== null) this.logger.log('Rank index snapshots are written again');
        this.snapshotFailure = null;
        this.logger.log(
          `Rank index snapshot written${repack ? ' (repacked)' : ''}: ${mib(bytes)} MiB at watermark ${watermark}, in ${Date.now() - started} ms`,
        );
      })
      .catch((error: unknown) => {
        this.snapshotFailed(error);
        throw error;
      });
  }

  /**
   * Streams both orders from the tables in rank order into compact sets; leaves the index not ready.
   * Pages are read by key, so a player changed during the load can be missing or twice: the caller
   * re-reads every player changed after the watermark it read before.
   */
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
    this.logger.log(`Rank index loaded from the tables: ${this.describe()}, in ${Date.now() - started} ms`);
  }

  /**
   * Loads the snapshot and catches up with the players changed after its watermark (the caller
   * holds the exclusive gate). false when there is no usable snapshot: the caller loads the tables.
   */
  private async loadSnapshot(): Promise<boolean> {
    const path = this.snapshotPath;
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
    await catchUp(this.repository, site, tracks, changed);
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
    this.watermark = now;
    this.ready = this.canAnswer();
    this.logger.log(
      `Rank index loaded from the snapshot at watermark ${opened.watermark} and ${changed.length} players changed since: ${this.describe()}, in ${Date.now() - started} ms`,
    );
    return true;
  }

  /** Writes a snapshot after a full load, when writes may already run (they wait for the gate meanwhile). */
  private saveInBackground(): void {
    if (this.closing) return;
    this.saveSnapshot().catch(() => undefined);
  }

  /**
   * A snapshot that cannot be written is logged (once per kind of failure until one is written
   * again); the next one is tried as usual (after a full load, at a clean stop): a full disk or a
   * read-only mount that is fixed brings snapshots back without a restart. The index is unaffected.
   */
  private snapshotFailed(error: unknown): void {
    const code = (error as NodeJS.ErrnoException).code;
    const kind = typeof code === 'string' ? code : 'other';
    const message = error instanceof Error ? error.message : String(error);
    if (this.snapshotFailure === kind) {
      this.logger.debug(`Rank index snapshot not written (${message})`);
      return;
    }
    this.snapshotFailure = kind;
    this.logger.warn(
      `Rank index snapshot not written in ${this.config.dataDir} (${message}); the next start loads the tables unless a later snapshot succeeds`,
    );
  }

  /** The bytes of every key block: about the size of a snapshot. */
  private keyBytes(): number {
    let bytes = this.site.bytes;
    for (const track of this.tracks.values()) bytes += track.bytes;
    return bytes;
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

  stats(): Promise<RankIndexStats> {
    let chartEntries = 0;
    for (const track of this.tracks.values()) chartEntries += track.size;
    return Promise.resolve({ ready: this.ready, rankedPlayers: this.site.size, chartEntries });
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

/**
 * Replaces the keys of the players `uids` in `site` and `tracks` by their current rows: every key of
 * theirs is dropped (one pass over the blocks), then their rows are read and inserted.
 */
async function catchUp(
  repository: RankSourceRepository,
  site: RankKeySet,
  tracks: Map<number, RankKeySet>,
  uids: readonly string[],
): Promise<void> {
  if (uids.length === 0) return;
  const dropped = new Set(uids.map(Number));
  const drop = (uid: number) => dropped.has(uid);
  site.removeUids(drop);
  for (const track of tracks.values()) track.removeUids(drop);
  for (let at = 0; at < uids.length; at += CATCH_UP_BATCH) {
    const keys = await repository.rankKeysOf(uids.slice(at, at + CATCH_UP_BATCH));
    for (let i = 0; i < keys.sites.count; i++) site.insert(-keys.sites.atpE4(i), 0, keys.sites.uid(i));
    const rows = keys.tracks;
    for (let i = 0; i < rows.count; i++)
      trackSet(tracks, rows.levelId(i)).insert(-rows.acc(i), rows.firstTimeMs(i), rows.uid(i));
  }
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

function trackSet(tracks: Map<number, RankKeySet>, levelId: number): RankKeySet {
  let set = tracks.get(levelId);
  if (!set) tracks.set(levelId, (set = new RankKeySet(CHART_KEY_CODEC)));
  return set;
}

function trackAheadOf(set: RankKeySet | undefined, best: TrackPosition, uid: number): number {
  return set ? set.countBelow(-best.acc, best.firstTimeMs, uid) : 0;
}
