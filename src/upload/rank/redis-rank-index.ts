import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { createHash } from 'node:crypto';
import { REDIS } from '../../common/redis/redis.module';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { toTenThousandths } from '../rating';
import { RankSourceRepository } from '../rank-source.repository';
import type { IndexedPositions, PlayerRankState } from '../upload.types';
import {
  IndexEntries,
  IndexWindow,
  IndexWindowRead,
  RankIndex,
  RankIndexStats,
  RankKey,
  RankWrite,
  trackMember,
  uidMember,
} from './rank-index';
import { WriterLock } from './writer-lock';

/**
 * Key names carry a format: `rank2:` since plays are ranked by the service's acceptance time and
 * entries can be removed (the ScoreIntegrity migration). A new format is built from the tables;
 * the keys of the previous one (`rank:`) are deleted once it is ready.
 */
const FORMAT = 'rank2';
const OLD_FORMAT_PATTERN = 'rank:*';
const READY = `${FORMAT}:ready`;
const SITE = `${FORMAT}:site`;
const trackKey = (levelId: number) => `${FORMAT}:track:${levelId}`;
/** Per player: field `v` = version of the site entry; field `<levelId>` = "<version>|<track member>". */
const playerKey = (uid: string) => `${FORMAT}:player:${uid}`;
const PAGE = 20_000;
/** Entries per LOAD script call, and script calls per pipeline. */
const LOAD_BATCH = 250;
const LOAD_PIPELINE = 8;

/**
 * Shared by both scripts: upserts a versioned entry. A site entry is (score −ATP, member uid); a
 * track entry is (score −acc, member first-reached + uid). An entry only moves forward: a write
 * older than the stored version is ignored, so late, repeated and rebuild writes are harmless.
 */
const UPSERT_LUA = `
local function upsert_site(site, player, member, version, score)
  local stored = tonumber(redis.call('HGET', player, 'v') or '-1')
  if version > stored then
    redis.call('ZADD', site, score, member)
    redis.call('HSET', player, 'v', version)
    return version
  end
  return stored
end
-- The player's stored track entry on a level: its version (-1: none) and member (false: none or removed).
local function stored_track(player, level)
  local stored = redis.call('HGET', player, level)
  if not stored then return -1, false end
  local bar = string.find(stored, '|', 1, true)
  local member = string.sub(stored, bar + 1)
  return tonumber(string.sub(stored, 1, bar - 1)), member ~= '' and member
end
local function upsert_track(track, player, level, version, score, member)
  local stored_version, stored_member = stored_track(player, level)
  if version > stored_version then
    if stored_member then redis.call('ZREM', track, stored_member) end
    redis.call('ZADD', track, score, member)
    redis.call('HSET', player, level, version .. '|' .. member)
    return version, member
  end
  return stored_version, stored_member
end
local function remove_site(site, player, member, version)
  local stored = tonumber(redis.call('HGET', player, 'v') or '-1')
  if version > stored then
    redis.call('ZREM', site, member)
    redis.call('HSET', player, 'v', version)
  end
end
local function remove_track(track, player, level, version)
  local stored_version, stored_member = stored_track(player, level)
  if version > stored_version then
    if stored_member then redis.call('ZREM', track, stored_member) end
    redis.call('HSET', player, level, version .. '|')
  end
end
`;

/**
 * KEYS: ready, site, player, track. ARGV: uid member, version, site score ('' = not ranked),
 * level ('' = no best there), best version, track score, track member.
 * Returns {site ahead, track ahead} (-1: not ranked), or -2 when the index is not built.
 * When the player's stored entry is newer than the state asked about (a later upload of the same
 * player got there first), the answer is still the asked state's position: a temporary member
 * just after it is ranked and removed, and the player's own newer entry is not counted.
 */
const SYNC_AND_RANK_LUA = `${UPSERT_LUA}
local function ahead(zset, score, member, own)
  local probe = member .. '~'
  redis.call('ZADD', zset, score, probe)
  local rank = redis.call('ZRANK', zset, probe)
  redis.call('ZREM', zset, probe)
  if own then
    local own_rank = redis.call('ZRANK', zset, own)
    if own_rank and own_rank < rank then rank = rank - 1 end
  end
  return rank
end
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
local site, track = -1, -1
if ARGV[3] ~= '' then
  local version = tonumber(ARGV[2])
  if upsert_site(KEYS[2], KEYS[3], ARGV[1], version, ARGV[3]) == version then
    site = redis.call('ZRANK', KEYS[2], ARGV[1])
  else
    site = ahead(KEYS[2], ARGV[3], ARGV[1], ARGV[1])
  end
end
if ARGV[4] ~= '' then
  local version = tonumber(ARGV[5])
  local stored_version, stored_member = upsert_track(KEYS[4], KEYS[3], ARGV[4], version, ARGV[6], ARGV[7])
  if stored_version == version then
    track = redis.call('ZRANK', KEYS[4], ARGV[7])
  else
    track = ahead(KEYS[4], ARGV[6], ARGV[7], stored_member)
  end
end
return {site, track}
`;

/**
 * Versioned writes of many committed entries in one call. KEYS: a (sorted set, player hash) pair
 * per entry. ARGV: 'site' then (uid member, version, score) per entry, 'track' then (level,
 * version, score, member) per entry, 'unsite' then (uid member, version), or 'untrack' then
 * (level, version): a removal, kept as the version in the player hash so older writes stay ignored.
 */
const LOAD_LUA = `${UPSERT_LUA}
local entries = #KEYS / 2
for i = 1, entries do
  local zset, player = KEYS[2 * i - 1], KEYS[2 * i]
  if ARGV[1] == 'site' then
    local at = 1 + (i - 1) * 3
    upsert_site(zset, player, ARGV[at + 1], tonumber(ARGV[at + 2]), ARGV[at + 3])
  elseif ARGV[1] == 'track' then
    local at = 1 + (i - 1) * 4
    upsert_track(zset, player, ARGV[at + 1], tonumber(ARGV[at + 2]), ARGV[at + 3], ARGV[at + 4])
  elseif ARGV[1] == 'unsite' then
    local at = 1 + (i - 1) * 2
    remove_site(zset, player, ARGV[at + 1], tonumber(ARGV[at + 2]))
  else
    local at = 1 + (i - 1) * 2
    remove_track(zset, player, ARGV[at + 1], tonumber(ARGV[at + 2]))
  end
end
return entries
`;

/**
 * A window, read only, in one call. KEYS: ready, sorted set. ARGV: member, its expected score,
 * entries ahead, entries behind. Returns {rank, ahead (member, score, …), behind (member, score, …)},
 * -1 when the member is not there with that score (a stale entry: the caller answers from SQL and
 * its rank read re-syncs the entry), -2 when the index is not built.
 */
const WINDOW_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return -1 end
local rank = redis.call('ZRANK', KEYS[2], ARGV[1])
local ahead, behind = tonumber(ARGV[3]), tonumber(ARGV[4])
local before, after = {}, {}
if ahead > 0 and rank > 0 then before = redis.call('ZRANGE', KEYS[2], math.max(0, rank - ahead), rank - 1, 'WITHSCORES') end
if behind > 0 then after = redis.call('ZRANGE', KEYS[2], rank + 1, rank + behind, 'WITHSCORES') end
return {rank, before, after}
`;

/** The keys of a ZRANGE … WITHSCORES reply (member, score, …) of the site order or of a chart's. */
function keysOf(reply: string[], site: boolean): RankKey[] {
  const keys: RankKey[] = [];
  for (let i = 0; i < reply.length; i += 2) {
    const member = reply[i];
    keys.push(
      site
        ? [Number(reply[i + 1]), 0, Number(member)]
        : [Number(reply[i + 1]), Number(member.slice(0, 15)), Number(member.slice(15))],
    );
  }
  return keys;
}

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/**
 * The rank index in Redis sorted sets (REDIS_URL set), shared by every instance: ZRANK is
 * O(log n) and a member's position among equal scores is its lexicographic order, which the
 * fixed-width members turn into the required tie-breaks (uid asc; first reached asc, then uid asc).
 *
 * Writes happen after the commit, in one script call that also answers the ranks. Each entry
 * carries the version of the player's rating row at its change, and the script only moves an
 * entry forward, so uploads of one player that finish out of order, repeated calls and a rebuild
 * running beside live uploads all converge on the committed state. Every answer first re-syncs
 * the player's own entries, so a lost write (a crash between commit and script) heals at that
 * player's next upload; `POST /admin/ratings/recompute` rebuilds everything.
 * When Redis fails, or the index is not built (`rank:ready` missing: first start, flushed Redis),
 * this instance answers from SQL and rebuilds in the background.
 */
@Injectable()
export class RedisRankIndex extends RankIndex implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly kind = 'redis' as const;
  private readonly logger = new Logger('RankIndex');
  private readonly syncSha = sha1(SYNC_AND_RANK_LUA);
  private readonly loadSha = sha1(LOAD_LUA);
  private readonly windowSha = sha1(WINDOW_LUA);
  private ready = false;
  private rebuilding: Promise<void> | null = null;
  private retrying = false;
  private closed = false;
  private lock: WriterLock | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly repository: RankSourceRepository,
  ) {
    super();
  }

  /**
   * Announces a Redis-backed writer (PostgreSQL) and builds the index when Redis does not have it.
   * With Redis unreachable the instance still starts: ranks come from SQL until the index is built.
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
          regained: () => this.logger.log('Rank index writer lock taken again'),
        },
        'An instance without REDIS_URL writes ratings on this database. Waiting for it to stop.',
      );
      await this.lock.acquire();
    }
    try {
      if ((await this.redis.exists(READY)) === 1) this.ready = true;
      else await this.rebuild();
    } catch (error) {
      this.lost(`Redis cannot build the rank index now (${error instanceof Error ? error.message : String(error)})`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    await this.rebuilding?.catch(() => undefined);
    await this.lock?.release();
  }

  /** Unordered: positions() brings a player's entries up to a version, whatever the order of the calls. */
  runWrite<T>(_uids: readonly string[], work: (write: RankWrite) => Promise<T>): Promise<T> {
    return work({ stage: () => null, outcomeUnknown: () => undefined });
  }

  async positions(state: PlayerRankState): Promise<IndexedPositions | null> {
    if (!this.ready) {
      // A rebuild may have read this player's page before this commit: write the entries anyway.
      await this.syncOwnEntries(state);
      return null;
    }
    if (this.redis.status !== 'ready') {
      this.lost(`Redis is ${this.redis.status}`);
      return null;
    }
    const keys = [READY, SITE, playerKey(state.uid), trackKey(state.levelId)];
    const args = [
      uidMember(state.uid),
      String(state.version),
      state.atpE4 === null ? '' : String(-state.atpE4),
      state.best === null ? '' : String(state.levelId),
      String(state.best?.version ?? 0),
      state.best === null ? '' : String(-state.best.acc),
      state.best === null ? '' : trackMember(state.uid, state.best.firstTimeMs),
    ];
    let result: unknown;
    try {
      result = await this.script(this.syncSha, SYNC_AND_RANK_LUA, keys, args);
    } catch (error) {
      this.lost(`Redis rank update failed (${error instanceof Error ? error.message : String(error)})`);
      return null;
    }
    if (result === -2) {
      this.lost('The Redis rank index is gone (flushed or evicted)');
      return null;
    }
    const [site, track] = result as [number, number];
    return { siteAhead: site < 0 ? null : site, trackAhead: track < 0 ? null : track };
  }

  async window(read: IndexWindowRead): Promise<IndexWindow | null> {
    if (!this.ready || this.redis.status !== 'ready') return null;
    const [score, time, uid] = read.key;
    const site = read.levelId === null;
    const member = site ? uidMember(String(uid)) : trackMember(String(uid), time);
    let result: unknown;
    try {
      result = await this.script(
        this.windowSha,
        WINDOW_LUA,
        [READY, site ? SITE : trackKey(read.levelId as number)],
        [member, String(score), String(read.ahead), String(read.behind)],
      );
    } catch (error) {
      this.lost(`Redis window read failed (${error instanceof Error ? error.message : String(error)})`);
      return null;
    }
    if (result === -2) {
      this.lost('The Redis rank index is gone (flushed or evicted)');
      return null;
    }
    if (result === -1) return null;
    const [position, ahead, behind] = result as [number, string[], string[]];
    return { position, ahead: keysOf(ahead, site), behind: keysOf(behind, site) };
  }

  /**
   * Writes every rating and best into Redis with its version (never undoing a newer entry), then
   * marks the index ready. Runs beside live uploads; this instance answers from SQL meanwhile.
   */
  rebuild(): Promise<void> {
    this.rebuilding ??= this.load().finally(() => (this.rebuilding = null));
    return this.rebuilding;
  }

  async stats(): Promise<RankIndexStats> {
    if (this.redis.status !== 'ready') return { ready: false, rankedPlayers: null, chartEntries: null };
    return { ready: this.ready, rankedPlayers: await this.redis.zcard(SITE), chartEntries: null };
  }

  private async load(): Promise<void> {
    this.ready = false;
    const started = Date.now();
    await this.redis.script('LOAD', LOAD_LUA);
    let players = 0;
    let bests = 0;
    for (let after = '0'; ;) {
      const page = await this.repository.pageRatings(after, PAGE);
      await this.syncEntries({
        sites: page.map((row) => ({ uid: row.uid, version: row.version, atpE4: toTenThousandths(Number(row.atp)) })),
        tracks: [],
      });
      players += page.length;
      if (page.length < PAGE) break;
      after = page[page.length - 1].uid;
    }
    for (let after = { uid: '0', levelId: 0 }; ;) {
      const page = await this.repository.pageBests(after.uid, after.levelId, PAGE);
      await this.syncEntries({ sites: [], tracks: page });
      bests += page.length;
      if (page.length < PAGE) break;
      after = page[page.length - 1];
    }
    await this.redis.set(READY, String(Date.now()));
    this.ready = true;
    this.logger.log(`Redis rank index built: ${players} ranked players, ${bests} bests, in ${Date.now() - started} ms`);
    void this.dropOldFormat();
  }

  /** Deletes the keys of the previous index format (SCAN + UNLINK in the background; best effort). */
  private async dropOldFormat(): Promise<void> {
    const prefix = this.config.redisKeyPrefix;
    let dropped = 0;
    try {
      let cursor = '0';
      do {
        // SCAN's pattern is not prefixed by ioredis; the keys it returns carry the prefix, UNLINK adds it again.
        const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${prefix}${OLD_FORMAT_PATTERN}`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) dropped += await this.redis.unlink(...keys.map((key) => key.slice(prefix.length)));
      } while (cursor !== '0' && !this.closed);
      if (dropped > 0) this.logger.log(`Deleted ${dropped} keys of the previous rank index format`);
    } catch (error) {
      this.logger.warn(
        `Could not delete the previous rank index keys (${error instanceof Error ? error.message : String(error)})`,
      );
    }
  }

  /** Versioned writes of committed entries, LOAD_BATCH a script call, pipelined (rebuild, admin recompute batches). */
  async syncEntries(entries: IndexEntries): Promise<void> {
    const calls: Array<Array<string | number>> = [];
    for (let i = 0; i < entries.sites.length; i += LOAD_BATCH) {
      const batch = entries.sites.slice(i, i + LOAD_BATCH);
      calls.push([
        batch.length * 2,
        ...batch.flatMap((e) => [SITE, playerKey(e.uid)]),
        'site',
        ...batch.flatMap((e) => [uidMember(e.uid), e.version, String(-e.atpE4)]),
      ]);
    }
    for (let i = 0; i < entries.tracks.length; i += LOAD_BATCH) {
      const batch = entries.tracks.slice(i, i + LOAD_BATCH);
      calls.push([
        batch.length * 2,
        ...batch.flatMap((e) => [trackKey(e.levelId), playerKey(e.uid)]),
        'track',
        ...batch.flatMap((e) => [String(e.levelId), e.version, String(-e.acc), trackMember(e.uid, e.firstTimeMs)]),
      ]);
    }
    const removedSites = entries.removedSites ?? [];
    for (let i = 0; i < removedSites.length; i += LOAD_BATCH) {
      const batch = removedSites.slice(i, i + LOAD_BATCH);
      calls.push([
        batch.length * 2,
        ...batch.flatMap((e) => [SITE, playerKey(e.uid)]),
        'unsite',
        ...batch.flatMap((e) => [uidMember(e.uid), e.version]),
      ]);
    }
    const removedTracks = entries.removedTracks ?? [];
    for (let i = 0; i < removedTracks.length; i += LOAD_BATCH) {
      const batch = removedTracks.slice(i, i + LOAD_BATCH);
      calls.push([
        batch.length * 2,
        ...batch.flatMap((e) => [trackKey(e.levelId), playerKey(e.uid)]),
        'untrack',
        ...batch.flatMap((e) => [String(e.levelId), e.version]),
      ]);
    }
    for (let i = 0; i < calls.length; i += LOAD_PIPELINE) {
      const pipeline = this.redis.pipeline();
      for (const args of calls.slice(i, i + LOAD_PIPELINE))
        pipeline.evalsha(this.loadSha, ...(args as [number, ...string[]]));
      const results = (await pipeline.exec()) ?? [];
      const failed = results.find(([error]) => error);
      if (failed?.[0] instanceof Error && failed[0].message.includes('NOSCRIPT')) {
        await this.redis.script('LOAD', LOAD_LUA);
        i -= LOAD_PIPELINE; // the writes are versioned: running the chunk again is harmless
      } else if (failed) {
        throw failed[0] as Error;
      }
    }
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
    await this.syncEntries(entries).catch(() => undefined);
  }

  private async script(sha: string, source: string, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await this.redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
      return this.redis.eval(source, keys.length, ...keys, ...args);
    }
  }

  /** Stops answering from Redis on this instance and rebuilds in the background until it succeeds. */
  private lost(reason: string): void {
    this.ready = false;
    if (this.retrying) return;
    this.retrying = true;
    this.logger.warn(`${reason}; ranks are counted in SQL while the index is rebuilt`);
    const retry = () => {
      if (this.closed) return;
      this.rebuild().then(
        () => (this.retrying = false),
        (error: unknown) => {
          this.logger.warn(
            `Rank index rebuild failed (${error instanceof Error ? error.message : String(error)}); retrying in 5 s`,
          );
          setTimeout(retry, 5_000).unref();
        },
      );
    };
    retry();
  }
}
