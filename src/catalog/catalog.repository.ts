import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { PreparedQueries } from '../database/prepared-queries';
import { BatchableStatement, compareUids, StatementBatcher } from '../database/statement-batcher';
import { DataSource, EntityManager } from 'typeorm';
import {
  ASSET_TYPE,
  ASSET_UNLOCK_METHOD,
  ChartDefinition,
  CollectionDefinition,
  MAX_PLAYER_COLLECTIONS,
} from './catalog.rules';
import { ChartEntity } from './entities/chart.entity';
import { CollectionEntity } from './entities/collection.entity';
import { PlayerCollectionEntity } from './entities/player-collection.entity';

/**
 * What a collection sync answered: the token's status, `refused` with the unknown keys, or
 * `too_many` with the count the call would have given the player (over MAX_PLAYER_COLLECTIONS):
 * nothing was written then.
 */
export interface GrantOutcome {
  status: string;
  refused: string[] | null;
  held: number | null;
}

export interface CollectionGrant {
  tokenHash: string;
  uid: string;
  serverSessionId: string;
  now: Date;
  keys: string[];
  assetKeys: string[];
}

/**
 * `rhythmc_grant_collections`, alone or for many players in one statement (StatementBatcher), by
 * uid. A batch carries each call's key lists as JSON text (StatementBatcher), unpacked in order. Each call creates its new asset keys in key order, but two batches
 * creating the same two new keys in different calls can still meet in the other order: a
 * deadlock, after which PostgreSQL cancels one batch and its calls run again alone.
 */
const GRANT_COLLECTIONS: BatchableStatement<CollectionGrant, GrantOutcome> = {
  name: 'catalog_grant_collections_held',
  single: 'SELECT * FROM rhythmc_grant_collections($1, $2, $3, $4, $5, $6, $7, $8, $9)',
  params: (g) => [
    g.tokenHash,
    g.uid,
    g.serverSessionId,
    g.now,
    g.keys,
    g.assetKeys,
    ASSET_TYPE,
    JSON.stringify(ASSET_UNLOCK_METHOD),
    MAX_PLAYER_COLLECTIONS,
  ],
  batch: `SELECT a.i, r.*
    FROM unnest($1::bpchar[], $2::bigint[], $3::uuid[], $4::timestamptz[], $5::text[], $6::text[], $7::varchar[], $8::text[], $9::int[])
         WITH ORDINALITY AS a(token_hash, uid, server_session_id, now, keys, asset_keys, asset_type, asset_unlock_method, max_held, i)
   CROSS JOIN LATERAL rhythmc_grant_collections(
         a.token_hash, a.uid, a.server_session_id, a.now,
         ARRAY(SELECT k.v FROM jsonb_array_elements_text(a.keys::jsonb) WITH ORDINALITY AS k(v, n) ORDER BY k.n)::varchar[],
         ARRAY(SELECT k.v FROM jsonb_array_elements_text(a.asset_keys::jsonb) WITH ORDINALITY AS k(v, n) ORDER BY k.n)::varchar[],
         a.asset_type, a.asset_unlock_method::jsonb, a.max_held) r
   ORDER BY a.i`,
  order: (a, b) => compareUids(a.uid, b.uid),
};

/** The `title` collections the player $1 has unlocked, by key (the public profile). */
const UNLOCKED_TITLES_SQL = `SELECT c.key, c.properties FROM player_collection pc JOIN collection c ON c.key = pc.collection_key
 WHERE pc.uid = $1 AND c.type = 'title' ORDER BY c.key`;

@Injectable()
export class CatalogRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly batcher: StatementBatcher,
    private readonly prepared: PreparedQueries,
  ) {}

  /** Every `title` collection the player has unlocked, by key. */
  allUnlockedTitles(uid: string): Promise<Pick<CollectionEntity, 'key' | 'properties'>[]> {
    return this.prepared.run('catalog_unlocked_titles', UNLOCKED_TITLES_SQL, [uid]);
  }

  private manager(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  /** Keys the player has unlocked, sorted. */
  async unlockedKeys(uid: string, manager?: EntityManager): Promise<string[]> {
    const rows = await this.manager(manager)
      .getRepository(PlayerCollectionEntity)
      .find({ where: { uid }, select: { collectionKey: true }, order: { collectionKey: 'ASC' } });
    return rows.map((row) => row.collectionKey);
  }

  /** Whether the catalog holds a collection with this key. */
  async collectionExists(key: string, manager?: EntityManager): Promise<boolean> {
    return this.manager(manager).getRepository(CollectionEntity).exists({ where: { key } });
  }

  /**
   * Grants the collection `key` to each of `uids` that does not own it yet (in the caller's
   * transaction): the uids it was granted to now, ascending. An owner is left as it is; a key the
   * catalog no longer holds grants nothing.
   */
  async grantToPlayers(key: string, uids: string[], manager: EntityManager): Promise<string[]> {
    if (uids.length === 0) return [];
    const rows = await manager.query<Array<{ uid: string }>>(
      `INSERT INTO player_collection (uid, collection_key)
       SELECT u, c.key FROM unnest($2::bigint[]) AS u JOIN collection c ON c.key = $1
       ORDER BY u
       ON CONFLICT (uid, collection_key) DO NOTHING
       RETURNING uid`,
      [key, uids],
    );
    return rows.map((row) => String(row.uid)).sort((a, b) => compareUids(a, b));
  }

  /** The `title` collections among `keys` that the player has unlocked. */
  unlockedTitles(uid: string, keys: string[], manager?: EntityManager): Promise<CollectionEntity[]> {
    if (keys.length === 0) return Promise.resolve([]);
    return this.manager(manager)
      .getRepository(CollectionEntity)
      .createQueryBuilder('c')
      .innerJoin(PlayerCollectionEntity, 'pc', 'pc.collection_key = c.key AND pc.uid = :uid', { uid })
      .where('c.key IN (:...keys)', { keys })
      .andWhere(`c.type = 'title'`)
      .getMany();
  }

  /** Every collection except the asset ones, by key. */
  listListedCollections(): Promise<CollectionEntity[]> {
    return this.manager()
      .getRepository(CollectionEntity)
      .createQueryBuilder('c')
      .where('c.type <> :asset', { asset: ASSET_TYPE })
      .orderBy('c.key', 'ASC')
      .getMany();
  }

  /** Inserts or replaces the definitions in one statement; returns how many rows it wrote. */
  async upsertCollections(definitions: CollectionDefinition[], manager?: EntityManager): Promise<number> {
    if (definitions.length === 0) return 0;
    const records = definitions.map((d) => ({
      key: d.key,
      type: d.type,
      unlock_method: d.unlockMethod,
      properties: d.properties,
    }));
    const rows = await this.manager(manager).query<unknown[]>(
      `INSERT INTO collection (key, type, unlock_method, properties)
       SELECT t.key, t.type, t.unlock_method, t.properties
         FROM jsonb_to_recordset($1::jsonb) AS t(key varchar, type varchar, unlock_method jsonb, properties jsonb)
       ON CONFLICT (key) DO UPDATE
         SET type = EXCLUDED.type, unlock_method = EXCLUDED.unlock_method, properties = EXCLUDED.properties, updated_at = now()
       RETURNING key`,
      [JSON.stringify(records)],
    );
    return rows.length;
  }

  /**
   * POST /player/collections in one round trip (`rhythmc_grant_collections`,
   * sql/rhythmc_grant_collections.sql): the player token is live, of this uid and
   * server session (its status otherwise); keys the player owns already are answered with nothing
   * checked or written; else unknown keys outside `assetKeys` refuse the whole
   * request (`refused`, in request order, nothing written); else the unknown keys become asset
   * collections and every key is granted, both in key order (concurrent calls naming the same
   * new keys in different orders wait on each other instead of deadlocking) and skipping rows
   * that exist; unless that would take the player past MAX_PLAYER_COLLECTIONS (`too_many`,
   * nothing written).
   */
  grantCollectionsWithToken(grant: CollectionGrant): Promise<GrantOutcome> {
    return this.batcher.run(GRANT_COLLECTIONS, grant);
  }

  /** The listed catalog's generation (catalog_generation). */
  async generation(): Promise<string> {
    const rows = await this.manager().query<Array<{ generation: string }>>(
      'SELECT generation::text AS generation FROM catalog_generation WHERE id = 1',
    );
    return rows[0]?.generation ?? '0';
  }

  /** Bumps the generation in the transaction of a catalog write. */
  async bumpGeneration(manager: EntityManager): Promise<void> {
    await manager.query('UPDATE catalog_generation SET generation = generation + 1 WHERE id = 1');
  }

  /** Every chart as stored (inactive and placeholder ones too), by level id after `afterLevelId`. */
  listStoredCharts(
    active: boolean | undefined,
    afterLevelId: number | undefined,
    limit: number,
  ): Promise<ChartEntity[]> {
    const query = this.manager()
      .getRepository(ChartEntity)
      .createQueryBuilder('c')
      .orderBy('c.level_id', 'ASC')
      .limit(limit);
    if (active !== undefined) query.andWhere('c.active = :active', { active });
    if (afterLevelId !== undefined) query.andWhere('c.level_id > :after', { after: afterLevelId });
    return query.getMany();
  }

  /** Every collection as stored (asset collections too), by key in byte order after `afterKey`. */
  listStoredCollections(
    type: string | undefined,
    afterKey: string | undefined,
    limit: number,
  ): Promise<CollectionEntity[]> {
    const query = this.manager()
      .getRepository(CollectionEntity)
      .createQueryBuilder('c')
      .orderBy('c.key COLLATE "C"', 'ASC')
      .limit(limit);
    if (type !== undefined) query.andWhere('c.type = :type', { type });
    if (afterKey !== undefined) query.andWhere('c.key COLLATE "C" > :after', { after: afterKey });
    return query.getMany();
  }

  listActiveCharts(): Promise<ChartEntity[]> {
    return this.manager()
      .getRepository(ChartEntity)
      .find({ where: { active: true }, order: { levelId: 'ASC' } });
  }

  findChart(levelId: number, manager?: EntityManager): Promise<ChartEntity | null> {
    return this.manager(manager).getRepository(ChartEntity).findOne({ where: { levelId } });
  }

  /**
   * Inserts or replaces the charts. A chart without `createdAt` gets the current time when it is
   * new and keeps its own when it exists; one with `createdAt` takes it either way.
   */
  async upsertCharts(charts: ChartDefinition[], manager: EntityManager): Promise<number> {
    if (charts.length === 0) return 0;
    const records = charts.map((c) => ({
      level_id: c.levelId,
      name: c.name,
      difficulty_constant: c.difficultyConstant,
      version: c.version,
      active: c.active,
      created_at: c.createdAt?.toISOString() ?? null,
      notes: c.notes,
    }));
    const json = JSON.stringify(records);
    const rows = await manager.query<unknown[]>(
      `INSERT INTO chart (level_id, name, difficulty_constant, version, active, created_at, notes, placeholder)
       SELECT t.level_id, t.name, t.difficulty_constant, t.version, t.active, COALESCE(t.created_at, now()), t.notes, false
         FROM jsonb_to_recordset($1::jsonb)
           AS t(level_id int, name varchar, difficulty_constant double precision, version varchar, active boolean, created_at timestamptz, notes int)
       ON CONFLICT (level_id) DO UPDATE
         SET name = EXCLUDED.name, difficulty_constant = EXCLUDED.difficulty_constant, version = EXCLUDED.version,
             active = EXCLUDED.active, notes = EXCLUDED.notes, placeholder = false, updated_at = now()
       RETURNING level_id`,
      [json],
    );
    await manager.query(
      `UPDATE chart SET created_at = t.created_at
         FROM jsonb_to_recordset($1::jsonb) AS t(level_id int, created_at timestamptz)
        WHERE chart.level_id = t.level_id AND t.created_at IS NOT NULL`,
      [json],
    );
    return rows.length;
  }

  /** Inserts a placeholder chart unless its level id exists (a concurrent insert of the same id wins quietly). */
  async insertPlaceholderIfAbsent(chart: Omit<ChartDefinition, 'createdAt'>, manager?: EntityManager): Promise<void> {
    await this.manager(manager).query(
      `INSERT INTO chart (level_id, name, difficulty_constant, version, active, placeholder)
       VALUES ($1, $2, $3, $4, $5, true)
       ON CONFLICT (level_id) DO NOTHING`,
      [chart.levelId, chart.name, chart.difficultyConstant, chart.version, chart.active],
    );
  }
}
