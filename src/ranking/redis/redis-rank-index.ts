import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { REDIS } from '../../common/redis/redis.module';
import { isNoScript, runScript } from '../../common/redis/run-script';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { toTenThousandths } from '../rating-scale';
import { RankSourceRepository } from '../rank-source.repository';
import type { IndexedPositions, PlayerRankState, StoredBest } from '../ranking.types';
import {
  IndexEntries,
  IndexWindow,
  IndexWindowRead,
  RankIndex,
  RankIndexStats,
  RankWrite,
  TrackRead,
} from '../rank-index/rank-index';
import { bindingMismatch, MismatchReason, readBinding, redisRunId } from './redis-index-binding';
import { siteNumbers, trackNumbers, uidNumber, versionNumber } from './redis-order-tree';
import {
  FORMAT,
  OLD_FORMAT_PATTERNS,
  GENERATION,
  BIND_LUA,
  NEXT_GENERATION_LUA,
  IndexKeys,
  isDamage,
  siteField,
  trackField,
  PAGE,
  LOAD_BATCH,
  LOAD_PIPELINE,
  SYNC_AND_RANK_LUA,
  TRACK_RANKS_LUA,
  LOAD_LUA,
  WINDOW_LUA,
  keysOf,
  sha1,
  OtherDatabaseIndex,
} from './redis-index-scripts';
import { WriterLock } from '../rank-index/writer-lock';

/** What a check of the index against this database found (RedisRankIndex.verify). */
type Verdict = 'ok' | 'missing' | 'moved' | 'yield';

/** The most entries kept for a rebuild after failed writes (syncEntries); past it, a new generation is built. */
const UNSYNCED_LIMIT = 200_000;

/** The entries whose version the database has drawn (rank_version_seq at `sequence`). */
const drawnBy = (entries: IndexEntries, sequence: number): IndexEntries => ({
  sites: entries.sites.filter((e) => e.version <= sequence),
  tracks: entries.tracks.filter((e) => e.version <= sequence),
  removedSites: entries.removedSites?.filter((e) => e.version <= sequence),
  removedTracks: entries.removedTracks?.filter((e) => e.version <= sequence),
});

const entriesCount = (entries: IndexEntries): number =>
  entries.sites.length +
  entries.tracks.length +
  (entries.removedSites?.length ?? 0) +
  (entries.removedTracks?.length ?? 0);

/**
 * The rank index in Redis (REDIS_URL set), shared by every instance: one counted B+-tree per order
 * (redis-order-tree.ts), whose records sort as the rank keys do (ATP desc, uid asc; acc desc,
 * first reached asc, uid asc), so a rank is O(log n) in one script call.
 *
 * Writes happen after the commit, in one script call that also answers the ranks. Each entry
 * carries the version of the player's rating row at its change, and the script only moves an
 * entry forward, so uploads of one player that finish out of order, repeated calls and a rebuild
 * running beside live uploads all converge on the committed state. Every answer first re-syncs
 * the player's own entries, so a lost write (a crash between commit and script) heals at that
 * player's next upload; `POST /admin/ratings/recompute` rebuilds everything.
 * When Redis fails, or the index is not built (`rank3:ready` missing: first start, flushed Redis),
 * this instance answers from SQL and rebuilds in the background.
 *
 * Each generation is bound to the database it was built from (redis-index-binding.ts): checked at
 * start, when Redis reconnects, when the database connection comes back, and by every script. An
 * index of another database, one ahead of this database (a restore) or kept by a restarted Redis
 * is replaced by a new generation built from the tables. An index of a database this instance
 * never used, found while it runs, is another deployment's on the same REDIS_KEY_PREFIX: the
 * instance leaves it alone and answers from SQL until it restarts.
 */
@Injectable()
export class RedisRankIndex extends RankIndex implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly kind = 'redis' as const;
  private readonly logger = new Logger('RankIndex');
  private readonly syncSha = sha1(SYNC_AND_RANK_LUA);
  private readonly trackRanksSha = sha1(TRACK_RANKS_LUA);
  private readonly loadSha = sha1(LOAD_LUA);
  private readonly windowSha = sha1(WINDOW_LUA);
  private keys = new IndexKeys(0);
  private ready = false;
  private rebuilding: Promise<void> | null = null;
  private retrying = false;
  private closed = false;
  private lock: WriterLock | null = null;
  /** This database's identity as last read (RankSourceRepository.rankIndexOrigin), passed to every script. */
  private database = '';
  /** The database of the index this instance last built or found its own; null before the first. */
  private boundTo: string | null = null;
  /** Replaced an index of a database it never used (at its start, once): a second one is a conflict. */
  private replacedOther = false;
  /** Another deployment's database whose index this instance found while running: it stays out of Redis. */
  private foreign: string | null = null;
  /** After the start: reconnects and a database coming back trigger a check. */
  private started = false;
  private checking: Promise<void> | null = null;
  /** A failed rebuild's next attempt (lost()). */
  private retryTimer: NodeJS.Timeout | null = null;
  private runIdRefused = false;
  /**
   * Committed entries whose write after the commit failed (syncEntries: an erasure, a review, a
   * recompute batch): written again by the rebuild that failure starts, after the tables, before the
   * index answers. A rebuild in place only writes the rows that exist, so without them a removal
   * (an erased player, a voided best) would stay in the trees. Versioned, so writing them late never
   * undoes a newer entry. Past UNSYNCED_LIMIT entries the list is dropped and the rebuild builds a
   * new generation from the tables instead.
   */
  private unsynced: IndexEntries[] = [];
  /** The next rebuild starts a new generation (the unsynced list overflowed). */
  private freshGeneration = false;
  private readonly mismatches = new Map<MismatchReason | 'conflict', number>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly repository: RankSourceRepository,
  ) {
    super();
  }

  /**
   * Announces a Redis-backed writer (PostgreSQL), then checks the index against this database:
   * builds it, in the background (the service listens meanwhile and ranks come from SQL), when Redis
   * does not have it or has one that is not this database's. With Redis
   * unreachable the instance still starts: ranks come from SQL until the index is built.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (this.config.databaseUrl !== null) {
      this.lock = new WriterLock(
        this.config.databaseUrl,
        'shared',
        this.logger,
        {
          lost: (error) =>
            this.logger.warn(
              `Rank index writer lock lost (${error.message}); taking it again when the database answers`,
            ),
          regained: () => {
            this.logger.log('Rank index writer lock taken again');
            // The database may be another one now (restored, failed over, recreated).
            this.recheck('the database connection is back');
          },
        },
        'An instance without REDIS_URL writes ratings on this database. Waiting for it to stop.',
        this.config.databasePoolMode,
      );
      await this.lock.acquire();
    }
    try {
      await this.readGeneration();
      const verdict = await this.verify();
      if (verdict === 'ok') this.ready = true;
      // Built while this instance serves, ranks from SQL meanwhile: a missing index (a first start,
      // a flushed Redis) takes minutes at 1M players, past any liveness probe, and an index of other
      // data may still serve other instances.
      else if (verdict === 'missing') this.lost('No Redis rank index yet', true);
      else if (verdict === 'moved') this.lost('The Redis rank index is replaced');
    } catch (error) {
      this.lost(`Redis cannot build the rank index now (${error instanceof Error ? error.message : String(error)})`);
    }
    this.started = true;
    this.redis.on('ready', () => {
      // A rebuild that waits to retry for Redis runs now (it checks the index first).
      if (this.retryTimer === null) this.recheck('Redis reconnected');
      else {
        clearTimeout(this.retryTimer);
        this.retryRebuild();
      }
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.rebuilding?.catch(() => undefined);
    await this.checking;
    await this.lock?.release();
  }

  /** Unordered: positions() brings a player's entries up to a version, whatever the order of the calls. */
  runWrite<T>(_uids: readonly string[], work: (write: RankWrite) => Promise<T>): Promise<T> {
    return work({ stage: () => null, outcomeUnknown: () => undefined });
  }

  async positions(state: PlayerRankState): Promise<IndexedPositions | null> {
    if (this.foreign !== null) return null;
    if (!this.ready) {
      // A rebuild may have read this player's page before this commit: write the entries anyway.
      await this.syncOwnEntries(state);
      return null;
    }
    if (this.redis.status !== 'ready') {
      this.lost(`Redis is ${this.redis.status}`);
      return null;
    }
    const result = await this.run('rank update', this.syncSha, SYNC_AND_RANK_LUA, (names) => {
      const { best } = state;
      return {
        keys: [names.ready, names.site, names.store(state.uid), names.track(state.levelId), names.binding],
        args: [
          uidNumber(state.uid),
          siteField(state.uid),
          versionNumber(state.version),
          ...(state.atpE4 === null ? [''] : siteNumbers(state.atpE4)),
          best === null ? '' : trackField(state.uid, state.levelId),
          versionNumber(best?.version ?? 0),
          ...(best === null ? ['', '', ''] : trackNumbers(best.acc, best.firstTimeMs)),
          this.database,
        ],
      };
    });
    if (result === null) return null;
    const [site, track] = result as [number, number];
    return { siteAhead: site < 0 ? null : site, trackAhead: track < 0 ? null : track };
  }

  /** positions() for several bests of one player, in one script call (TRACK_RANKS_LUA). */
  async trackPositions(uid: string, bests: readonly TrackRead[]): Promise<number[] | null> {
    if (this.foreign !== null) return null;
    if (bests.length === 0) return [];
    if (!this.ready) {
      // As positions(): a rebuild may have read this player's page before their commit.
      if (this.redis.status === 'ready')
        await this.writeEntries({
          sites: [],
          tracks: bests.map(({ levelId, best: { version, acc, firstTimeMs } }) => ({
            uid,
            levelId,
            version,
            acc,
            firstTimeMs,
          })),
        }).catch(() => undefined);
      return null;
    }
    if (this.redis.status !== 'ready') {
      this.lost(`Redis is ${this.redis.status}`);
      return null;
    }
    const result = await this.run('rank read', this.trackRanksSha, TRACK_RANKS_LUA, (names) => {
      const keys = [names.ready, names.store(uid), names.binding];
      const args = [uidNumber(uid), this.database];
      for (const { levelId, best } of bests) {
        keys.push(names.track(levelId));
        args.push(trackField(uid, levelId), versionNumber(best.version), ...trackNumbers(best.acc, best.firstTimeMs));
      }
      return { keys, args };
    });
    return result as number[] | null;
  }

  async window(read: IndexWindowRead): Promise<IndexWindow | null> {
    if (!this.ready || this.foreign !== null || this.redis.status !== 'ready') return null;
    const [score, time, uid] = read.key;
    const site = read.levelId === null;
    const result = await this.run('window read', this.windowSha, WINDOW_LUA, (names) => ({
      keys: [names.ready, site ? names.site : names.track(read.levelId as number), names.binding],
      args: [
        ...(site ? ['s', ...siteNumbers(-score)] : ['t', ...trackNumbers(-score, time)]),
        uidNumber(String(uid)),
        String(read.ahead),
        String(read.behind),
        this.database,
      ],
    }));
    if (result === null || result === -1) return null;
    const [position, ahead, behind] = result as [number, number[], number[]];
    return { position, ahead: keysOf(ahead, site), behind: keysOf(behind, site) };
  }

  /**
   * Checks the index against this database, then writes every rating and best into Redis with its
   * version (never undoing a newer entry) and marks it ready. Runs beside live uploads; this
   * instance answers from SQL meanwhile.
   */
  rebuild(): Promise<void> {
    this.rebuilding ??= this.load().finally(() => (this.rebuilding = null));
    return this.rebuilding;
  }

  async stats(): Promise<RankIndexStats> {
    if (this.redis.status !== 'ready') return { ready: false, rankedPlayers: null, chartEntries: null };
    return {
      ready: this.ready,
      rankedPlayers: Number((await this.redis.hget(this.keys.site, 'c')) ?? 0),
      chartEntries: null,
    };
  }

  override bindingMismatches(): ReadonlyMap<string, number> {
    return this.mismatches;
  }

  private async load(): Promise<void> {
    this.ready = false;
    const started = Date.now();
    await this.redis.script('LOAD', LOAD_LUA);
    for (;;) {
      const followed = await this.readGeneration();
      if (this.freshGeneration) {
        const next = await this.moveOn(this.keys.generation);
        this.freshGeneration = false;
        this.logger.warn(
          `Too many rank index writes failed after their commit: generation ${next} is built from the tables`,
        );
        continue;
      }
      const verdict = await this.verify();
      if (verdict === 'yield') return;
      if (verdict === 'ok' && followed) {
        await this.writeUnsynced();
        this.answerFromNow();
        this.logger.log(`Redis rank index: generation ${this.keys.generation}, built by another instance, is in use`);
        return;
      }
      // 'ok' on the generation in use (after a Redis failure: writes may be missing), 'missing' or 'moved'.
      const { generation } = this.keys;
      const bound = String(
        await this.redis.eval(BIND_LUA, 1, this.keys.binding, this.database, (await this.redisRun()) ?? ''),
      );
      if (bound !== this.database) {
        // Another deployment binds this generation at the same time.
        if (this.otherDatabase(bound) === 'yield') return;
        this.count('other_database');
        const next = await this.moveOn(generation);
        this.logger.warn(
          `The Redis rank index generation ${generation} is being built from database ${bound}, not this one (${this.database}); building generation ${next}`,
        );
        continue;
      }
      const { players, bests } = await this.loadTables();
      // Another instance found damage and moved on while this one loaded: build that generation.
      if (Number((await this.redis.get(GENERATION)) ?? 0) !== generation) continue;
      await this.writeUnsynced();
      await this.redis.set(this.keys.ready, String(Date.now()));
      this.boundTo = this.database;
      this.answerFromNow();
      this.logger.log(
        `Redis rank index built: ${players} ranked players, ${bests} bests, in ${Date.now() - started} ms` +
          (generation > 0 ? ` (generation ${generation})` : ''),
      );
      void this.dropOldKeys();
      return;
    }
  }

  /**
   * Checks the generation in use against this database (redis-index-binding.ts): 'ok' it may
   * answer, 'missing' it is not built, 'moved' it is not this database's and the generation moved
   * on (to be built), 'yield' it is another deployment's (this instance stays out of Redis).
   */
  private async verify(): Promise<Verdict> {
    const { keys } = this;
    // Redis first: an entry reaches Redis after its commit, so the database read after holds it.
    const [ready, hash, run] = await Promise.all([
      this.redis.exists(keys.ready),
      this.redis.hgetall(keys.binding),
      this.redisRun(),
    ]);
    const binding = readBinding(hash);
    const origin = await this.repository.rankIndexOrigin(binding.uid);
    this.database = origin.database;
    if (ready === 0) return 'missing';
    const mismatch = bindingMismatch(binding, origin, run);
    if (mismatch === null) {
      this.boundTo = origin.database;
      return 'ok';
    }
    if (mismatch.reason === 'other_database' && this.otherDatabase(binding.database as string) === 'yield')
      return 'yield';
    this.count(mismatch.reason);
    this.dropUnsynced(); // entries of the index's database, not of the one it is rebuilt from
    const next = await this.moveOn(keys.generation);
    this.logger.warn(
      `The Redis rank index does not match this database (${mismatch.detail}); generation ${keys.generation} is replaced by ${next}, built from the tables (ranks from SQL meanwhile)`,
    );
    return 'moved';
  }

  /**
   * An index bound to `other`: replaced when this instance has not used an index yet (its start:
   * once) or when `other` is the database it used (its own database changed: recreated, or
   * another one behind the same address); otherwise it is another deployment's, and this instance
   * yields.
   */
  private otherDatabase(other: string): 'replace' | 'yield' {
    const replace = this.boundTo === null ? !this.replacedOther : this.boundTo === other;
    if (replace) {
      if (this.boundTo === null) this.replacedOther = true;
      return 'replace';
    }
    this.ready = false;
    if (this.foreign === null) {
      this.count('conflict');
      this.logger.error(
        `The Redis rank index under REDIS_KEY_PREFIX "${this.config.redisKeyPrefix}" is bound to database ${other}, ` +
          `not to this one (${this.database}): another deployment shares the prefix. This instance answers ranks ` +
          'from SQL and leaves the index alone until it restarts; give each deployment its own REDIS_KEY_PREFIX.',
      );
    }
    this.foreign = other;
    return 'yield';
  }

  /** Moves the generation on from `from` (once among instances) and follows it; answers the one in use. */
  private async moveOn(from: number): Promise<number> {
    this.ready = false;
    const next = Number(await this.redis.eval(NEXT_GENERATION_LUA, 1, GENERATION, String(from)));
    if (next !== this.keys.generation) this.keys = new IndexKeys(next);
    return next;
  }

  /**
   * Checks the index again after something that may have changed either side (Redis reconnected,
   * the database came back, a script found another binding); rebuilds on a mismatch. One at a
   * time; skipped while a rebuild runs (it checks first).
   */
  private recheck(why: string): void {
    if (!this.started || this.closed || this.foreign !== null || this.checking || this.rebuilding) return;
    this.checking = (async () => {
      try {
        await this.readGeneration();
        const verdict = await this.verify();
        if (verdict === 'missing') this.lost(`The Redis rank index is gone (${why})`);
        else if (verdict === 'moved') this.lost(`The Redis rank index is replaced (${why})`);
      } catch (error) {
        this.logger.warn(
          `Checking the rank index (${why}) failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    })().finally(() => (this.checking = null));
  }

  /** Redis's run_id (INFO server); null when INFO is refused (an ACL), then the restart check is skipped. */
  private async redisRun(): Promise<string | null> {
    if (this.runIdRefused) return null;
    try {
      return redisRunId(await this.redis.info('server'));
    } catch (error) {
      if (!(error instanceof Error) || !/NOPERM|unknown command/i.test(error.message)) throw error;
      this.runIdRefused = true;
      this.logger.warn(`Redis refuses INFO (${error.message}); a restarted Redis that kept the index is not detected`);
      return null;
    }
  }

  private count(reason: MismatchReason | 'conflict'): void {
    this.mismatches.set(reason, (this.mismatches.get(reason) ?? 0) + 1);
  }

  /** Writes every rating and best, in each order's own order, so that the trees' leaves fill up (redis-order-tree.ts). */
  private async loadTables(): Promise<{ players: number; bests: number }> {
    let players = 0;
    let bests = 0;
    for (let after: { atp: string; uid: string } | null = null; ;) {
      const page = await this.repository.pageRatingsInSiteOrder(after, PAGE);
      await this.writeEntries({
        sites: page.map((row) => ({ uid: row.uid, version: row.version, atpE4: toTenThousandths(Number(row.atp)) })),
        tracks: [],
      });
      players += page.length;
      if (page.length < PAGE) break;
      after = page[page.length - 1];
    }
    for (let after: StoredBest | null = null; ;) {
      const page = await this.repository.pageBestsInTrackOrder(after, PAGE);
      await this.writeEntries({ sites: [], tracks: page });
      bests += page.length;
      if (page.length < PAGE) break;
      after = page[page.length - 1];
    }
    return { players, bests };
  }

  /** Follows the generation in Redis; true when it moved. */
  private async readGeneration(): Promise<boolean> {
    const generation = Number((await this.redis.get(GENERATION)) ?? 0);
    if (generation === this.keys.generation) return false;
    this.keys = new IndexKeys(generation);
    return true;
  }

  /**
   * Deletes the keys of the previous formats and of the generations before this one (SCAN +
   * UNLINK in the background; best effort). The replaced generations' ready markers go first, so
   * that an instance still on one stops answering from it before its trees go.
   */
  private async dropOldKeys(): Promise<void> {
    const prefix = this.config.redisKeyPrefix;
    const { generation } = this.keys;
    let dropped = 0;
    try {
      const patterns = [...OLD_FORMAT_PATTERNS];
      if (generation > 0) {
        await this.redis.unlink(...Array.from({ length: generation }, (_, older) => new IndexKeys(older).ready));
        patterns.push(`${FORMAT}:*`);
      }
      const replaced = (name: string) => {
        if (!name.startsWith(`${FORMAT}:`)) return true; // rank: and rank2:
        if (name === GENERATION) return false;
        const match = /^rank3:g(\d+):/.exec(name);
        return (match === null ? 0 : Number(match[1])) < generation;
      };
      for (const pattern of patterns) {
        let cursor = '0';
        do {
          // SCAN's pattern is not prefixed by ioredis; the keys it returns carry the prefix, UNLINK adds it again.
          const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${prefix}${pattern}`, 'COUNT', 1000);
          cursor = next;
          const names = keys.map((key) => key.slice(prefix.length)).filter(replaced);
          if (names.length > 0) dropped += await this.redis.unlink(...names);
        } while (cursor !== '0' && !this.closed);
      }
      if (dropped > 0) this.logger.log(`Deleted ${dropped} keys of replaced rank index formats or generations`);
    } catch (error) {
      this.logger.warn(
        `Could not delete the replaced rank index keys (${error instanceof Error ? error.message : String(error)})`,
      );
    }
  }

  /**
   * After a commit that changed many entries (a recompute batch, a review, an erasure): their
   * versioned writes. One that fails (Redis down, a timeout, a chunk of the pipeline refused) does
   * not fail the caller, whose change is committed: the entries are kept for the rebuild it starts
   * (`unsynced`), and ranks come from SQL until then.
   */
  async syncEntries(entries: IndexEntries): Promise<void> {
    try {
      await this.writeEntries(entries);
    } catch (error) {
      if (error instanceof OtherDatabaseIndex) return; // recheck() takes it from here
      this.keepUnsynced(entries);
      this.lost(`A rank index write after a commit failed (${error instanceof Error ? error.message : String(error)})`);
    }
  }

  private dropUnsynced(): void {
    this.unsynced = [];
  }

  private keepUnsynced(entries: IndexEntries): void {
    if (this.freshGeneration) return;
    const kept = this.unsynced.reduce((sum, list) => sum + entriesCount(list), 0);
    if (kept + entriesCount(entries) > UNSYNCED_LIMIT) {
      this.dropUnsynced();
      this.freshGeneration = true;
      return;
    }
    this.unsynced.push(entries);
  }

  /** The rebuild's last step before the index answers: the entries whose write after a commit failed. */
  private async writeUnsynced(): Promise<void> {
    if (this.unsynced.length === 0) return;
    // Entries of another timeline (a restore or a failover to a replica behind, since they were
    // kept) carry versions the database has not drawn: they would contradict its tables.
    const { sequence } = await this.repository.rankIndexOrigin(null);
    while (this.unsynced.length > 0) {
      const next = this.unsynced[0];
      await this.writeEntries(drawnBy(next, Number(sequence)));
      // Unless the list was dropped meanwhile (an overflow: a new generation comes instead).
      if (this.unsynced[0] === next) this.unsynced.shift();
    }
  }

  /** The end of a rebuild: the index answers, unless a write after a commit failed meanwhile (then another rebuild). */
  private answerFromNow(): void {
    if (this.unsynced.length === 0 && !this.freshGeneration) {
      this.ready = true;
      return;
    }
    // lost() starts nothing while this rebuild's attempt is still the one in progress.
    setTimeout(() => this.lost('A rank index write after a commit failed during the rebuild'), 0).unref();
  }

  /**
   * Versioned writes of committed entries, LOAD_BATCH a script call, pipelined (rebuild, syncEntries).
   * Nothing while this instance stays out of another deployment's index.
   */
  private async writeEntries(entries: IndexEntries): Promise<void> {
    if (this.foreign !== null) return;
    const { keys, database } = this;
    const { binding } = keys;
    const calls: Array<Array<string | number>> = [];
    const batches = <T>(list: T[] | undefined, op: string, keys: (e: T) => string[], args: (e: T) => string[]) => {
      for (let i = 0; i < (list?.length ?? 0); i += LOAD_BATCH) {
        const batch = (list as T[]).slice(i, i + LOAD_BATCH);
        calls.push([1 + batch.length * 2, binding, ...batch.flatMap(keys), database, op, ...batch.flatMap(args)]);
      }
    };
    batches(
      entries.sites,
      'site',
      (e) => [keys.site, keys.store(e.uid)],
      (e) => [uidNumber(e.uid), siteField(e.uid), versionNumber(e.version), ...siteNumbers(e.atpE4)],
    );
    batches(
      entries.tracks,
      'track',
      (e) => [keys.track(e.levelId), keys.store(e.uid)],
      (e) => [
        uidNumber(e.uid),
        trackField(e.uid, e.levelId),
        versionNumber(e.version),
        ...trackNumbers(e.acc, e.firstTimeMs),
      ],
    );
    batches(
      entries.removedSites,
      'unsite',
      (e) => [keys.site, keys.store(e.uid)],
      (e) => [uidNumber(e.uid), siteField(e.uid), versionNumber(e.version)],
    );
    batches(
      entries.removedTracks,
      'untrack',
      (e) => [keys.track(e.levelId), keys.store(e.uid)],
      (e) => [uidNumber(e.uid), trackField(e.uid, e.levelId), versionNumber(e.version)],
    );
    for (let i = 0; i < calls.length; i += LOAD_PIPELINE) {
      const pipeline = this.redis.pipeline();
      for (const args of calls.slice(i, i + LOAD_PIPELINE))
        pipeline.evalsha(this.loadSha, ...(args as [number, ...string[]]));
      const results = (await pipeline.exec()) ?? [];
      const failed = results.find(([error]) => error);
      if (isNoScript(failed?.[0])) {
        await this.redis.script('LOAD', LOAD_LUA);
        i -= LOAD_PIPELINE; // the writes are versioned: running the chunk again is harmless
      } else if (failed) {
        throw failed[0] as Error;
      } else if (results.some(([, result]) => result === -3)) {
        this.recheck('an index write found it bound to another database');
        throw new OtherDatabaseIndex();
      }
    }
  }

  /**
   * One script call on the current generation (`call` names its keys and arguments from that
   * generation's key names). null when it failed (failed()), found the index gone (-2: lost()) or
   * bound to another database (-3: recheck()); the script's answer otherwise.
   */
  private async run(
    what: string,
    sha: string,
    source: string,
    call: (names: IndexKeys) => { keys: string[]; args: string[] },
  ): Promise<unknown> {
    const names = this.keys;
    let result: unknown;
    try {
      const { keys, args } = call(names);
      result = await runScript(this.redis, sha, source, keys, args);
    } catch (error) {
      this.failed(`Redis ${what}`, error, names.generation);
      return null;
    }
    if (result === -2) {
      this.lost('The Redis rank index is gone (flushed or evicted)');
      return null;
    }
    if (result === -3) {
      this.recheck(`a ${what} found the index bound to another database`);
      return null;
    }
    return result;
  }

  /** Best effort: the player's committed entries, versioned, while the index is not answering. */
  private async syncOwnEntries(state: PlayerRankState): Promise<void> {
    if (this.redis.status !== 'ready') return;
    const entries: IndexEntries = { sites: [], tracks: [] };
    if (state.atpE4 !== null) entries.sites.push({ uid: state.uid, version: state.version, atpE4: state.atpE4 });
    if (state.best !== null)
      entries.tracks.push({
        uid: state.uid,
        levelId: state.levelId,
        version: state.best.version,
        acc: state.best.acc,
        firstTimeMs: state.best.firstTimeMs,
      });
    await this.writeEntries(entries).catch(() => undefined);
  }

  /**
   * A script on generation `damaged` failed: a damaged tree moves the index to a new generation
   * built from the tables; anything else (Redis down, a timeout) rebuilds in place.
   */
  private failed(what: string, error: unknown, damaged: number): void {
    const message = error instanceof Error ? error.message : String(error);
    if (!isDamage(error)) {
      this.lost(`${what} failed (${message})`);
      return;
    }
    this.ready = false;
    // The generation the failed script ran on: a script of an instance that already moved on must not move it twice.
    this.redis
      .eval(NEXT_GENERATION_LUA, 1, GENERATION, String(damaged))
      .then((next) => {
        if (Number(next) !== this.keys.generation) this.keys = new IndexKeys(Number(next));
      })
      .catch(() => undefined)
      .finally(() =>
        this.lost(
          `The Redis rank index is damaged (${message}); generation ${damaged} is replaced by ${this.keys.generation}, built from the tables`,
        ),
      );
  }

  /**
   * Stops answering from Redis on this instance and rebuilds in the background until it succeeds.
   * `expected`: an index missing at the start (a first start, a flushed Redis) is logged, not warned of.
   */
  private lost(reason: string, expected = false): void {
    this.ready = false;
    if (this.retrying || this.foreign !== null) return;
    this.retrying = true;
    const message = `${reason}; ranks are counted in SQL while the index is rebuilt`;
    if (expected) this.logger.log(message);
    else this.logger.warn(message);
    this.retryRebuild();
  }

  /** One attempt of lost()'s rebuild; the next in 5 s, or as soon as Redis reconnects. */
  private retryRebuild(): void {
    this.retryTimer = null;
    if (this.closed) return;
    this.rebuild().then(
      () => (this.retrying = false),
      (error: unknown) => {
        this.logger.warn(
          `Rank index rebuild failed (${error instanceof Error ? error.message : String(error)}); retrying in 5 s`,
        );
        if (this.closed) return;
        this.retryTimer = setTimeout(() => this.retryRebuild(), 5_000);
        this.retryTimer.unref();
      },
    );
  }
}
