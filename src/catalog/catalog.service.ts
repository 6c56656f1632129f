import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PlayerSessionService } from '../auth/player-session.service';
import type { ServerSessionContext } from '../auth/auth.types';
import { BadRequestError } from '../common/errors/app-error';
import { formatLocalDateTime } from '../common/time';
import { TransactionService } from '../database/transaction.service';
import { CatalogRepository } from './catalog.repository';
import {
  isAssetKey,
  LEVEL_ID_MAX,
  CollectionDefinition,
  ChartEntry,
  placeholderChart,
  toChartDefinition,
  MAX_PLAYER_COLLECTIONS,
} from './catalog.rules';
import { ChartInfo, TitleInfo } from './catalog.types';
import { UpsertedResponse } from '../common/dto/upserted.response';
import type { PreparedJson } from '../common/http/prepared-json';
import { CatalogReadCache } from './catalog-read.cache';
import { ChartResponse, CollectionResponse } from './dto/catalog.response';
import { SyncCollectionsDto } from './dto/sync-collections.dto';
import { AdminChartPage, AdminCollectionPage } from './dto/catalog-admin-read.dto';
import { ListQuery, toPage } from '../common/pagination/list-query';
import { ChartEntity } from './entities/chart.entity';
import { CollectionEntity } from './entities/collection.entity';

export const CHART_LIST = 'charts';
export const COLLECTION_LIST = 'collections';

/** Unknown keys spelled out in one 400 answer; the rest are counted. */
const MAX_LISTED_UNKNOWN_KEYS = 50;

export function toTitleInfo(collection: Pick<CollectionEntity, 'key' | 'properties'>): TitleInfo {
  const properties = collection.properties;
  const description = properties.description;
  return {
    key: collection.key,
    title: typeof properties.title === 'string' ? properties.title : '',
    description: Array.isArray(description)
      ? description.map(String)
      : typeof description === 'string'
        ? description
        : '',
    rarity: typeof properties.rarity === 'string' ? properties.rarity : '',
    position: properties.position === true,
  };
}

function toCollectionResponse(collection: CollectionEntity): CollectionResponse {
  return {
    key: collection.key,
    type: collection.type,
    unlockMethod: collection.unlockMethod,
    properties: collection.properties,
  };
}

function toChartResponse(chart: ChartEntity): ChartResponse {
  return {
    levelId: chart.levelId,
    name: chart.name,
    difficultyConstant: chart.difficultyConstant,
    version: chart.version,
    createdAt: formatLocalDateTime(chart.createdAt),
  };
}

function toChartInfo(chart: ChartEntity): ChartInfo {
  return {
    levelId: chart.levelId,
    name: chart.name,
    difficultyConstant: chart.difficultyConstant,
    version: chart.version,
    active: chart.active,
    placeholder: chart.placeholder,
    notes: chart.notes,
  };
}

@Injectable()
export class CatalogService {
  constructor(
    private readonly catalog: CatalogRepository,
    private readonly playerSessions: PlayerSessionService,
    private readonly tx: TransactionService,
    private readonly reads: CatalogReadCache,
  ) {}

  unlockedKeys(uid: string, manager?: EntityManager): Promise<string[]> {
    return this.catalog.unlockedKeys(uid, manager);
  }

  /** Whether the catalog holds a collection with this key. */
  collectionExists(key: string, manager?: EntityManager): Promise<boolean> {
    return this.catalog.collectionExists(key, manager);
  }

  /** Grants `key` to the players of `uids` that lack it (in the caller's transaction); those granted now. */
  grantToPlayers(key: string, uids: string[], manager: EntityManager): Promise<string[]> {
    return this.catalog.grantToPlayers(key, uids, manager);
  }

  /** Title metadata of the keys the player has unlocked as `title` collections (others are absent). */
  async unlockedTitles(uid: string, keys: string[], manager?: EntityManager): Promise<Map<string, TitleInfo>> {
    const titles = await this.catalog.unlockedTitles(uid, [...new Set(keys)], manager);
    return new Map(titles.map((title) => [title.key, toTitleInfo(title)]));
  }

  /** Every `title` collection the player has unlocked, by key (the public profile). */
  async playerTitles(uid: string): Promise<TitleInfo[]> {
    return (await this.catalog.allUnlockedTitles(uid)).map(toTitleInfo);
  }

  /** GET /server/collections: every collection but the asset ones, as prepared JSON (CatalogReadCache). */
  listCollections(): Promise<PreparedJson> {
    return this.reads.get('collections', async () =>
      (await this.catalog.listListedCollections()).map(toCollectionResponse),
    );
  }

  /** PUT /admin/collections: all entries valid or nothing stored. */
  async upsertCollections(definitions: CollectionDefinition[]): Promise<UpsertedResponse> {
    const upserted = await this.tx.run(async (manager) => {
      const count = await this.catalog.upsertCollections(definitions, manager);
      await this.catalog.bumpGeneration(manager);
      return count;
    });
    await this.reads.changed();
    return { upserted };
  }

  /**
   * POST /player/collections: grants the keys (never removes any). Unknown `rhythmc:assets.` keys
   * become asset collections; any other unknown key fails the whole request before anything is
   * written. Both inserts skip rows that exist, so repeated and concurrent calls are harmless.
   * The token check and the writes are one round trip (CatalogRepository.grantCollectionsWithToken).
   */
  async syncPlayerCollections(server: ServerSessionContext, body: SyncCollectionsDto): Promise<void> {
    const keys = [...new Set(body.collections)];
    const result = await this.catalog.grantCollectionsWithToken({
      ...this.playerSessions.boundTokenCheck(body.accessToken, server),
      uid: body.uid,
      keys,
      assetKeys: keys.filter(isAssetKey),
    });
    this.playerSessions.assertBoundTokenStatus(
      result.status === 'refused' || result.status === 'too_many' ? 'ok' : result.status,
    );
    if (result.status === 'too_many') {
      throw BadRequestError.field(
        'collections',
        `would give the player ${result.held ?? 0} collections; a player holds at most ${MAX_PLAYER_COLLECTIONS}`,
        'label',
      );
    }
    if (result.status === 'refused') {
      const refused = result.refused ?? [];
      const listed = refused.slice(0, MAX_LISTED_UNKNOWN_KEYS).join(', ');
      const more =
        refused.length > MAX_LISTED_UNKNOWN_KEYS ? ` and ${refused.length - MAX_LISTED_UNKNOWN_KEYS} more` : '';
      throw BadRequestError.field('collections', `unknown collection keys: ${listed}${more}`, 'label');
    }
  }

  /** GET /server/charts: active charts, by level id, as prepared JSON (CatalogReadCache). */
  /** GET /admin/charts: as stored, uncached. */
  async listStoredCharts(query: ListQuery<{ active: boolean }>): Promise<AdminChartPage> {
    const after = query.after === undefined ? undefined : Number(query.after);
    const rows = await this.catalog.listStoredCharts(query.filters.active, after, query.limit + 1);
    return toPage(
      rows,
      query,
      CHART_LIST,
      (chart) => String(chart.levelId),
      (chart) => ({
        levelId: chart.levelId,
        name: chart.name,
        difficultyConstant: chart.difficultyConstant,
        version: chart.version,
        active: chart.active,
        placeholder: chart.placeholder,
        notes: chart.notes,
        createdAt: formatLocalDateTime(chart.createdAt),
        updatedAt: formatLocalDateTime(chart.updatedAt),
      }),
    );
  }

  /** GET /admin/collections: as stored, uncached. */
  async listStoredCollections(query: ListQuery<{ type: string }>): Promise<AdminCollectionPage> {
    const rows = await this.catalog.listStoredCollections(query.filters.type, query.after, query.limit + 1);
    return toPage(
      rows,
      query,
      COLLECTION_LIST,
      (collection) => collection.key,
      (collection) => ({
        ...toCollectionResponse(collection),
        createdAt: formatLocalDateTime(collection.createdAt),
        updatedAt: formatLocalDateTime(collection.updatedAt),
      }),
    );
  }

  listActiveCharts(): Promise<PreparedJson> {
    return this.reads.get('charts', async () => (await this.catalog.listActiveCharts()).map(toChartResponse));
  }

  /** PUT /admin/charts: all entries valid or nothing stored. */
  async upsertCharts(entries: ChartEntry[]): Promise<UpsertedResponse> {
    const charts = entries.map(toChartDefinition);
    const upserted = await this.tx.run(async (manager) => {
      const count = await this.catalog.upsertCharts(charts, manager);
      await this.catalog.bumpGeneration(manager);
      return count;
    });
    await this.reads.changed();
    return { upserted };
  }

  /** The catalog row of a level id (active or not), or null. */
  async findChart(levelId: number, manager?: EntityManager): Promise<ChartInfo | null> {
    const chart = await this.catalog.findChart(levelId, manager);
    return chart ? toChartInfo(chart) : null;
  }

  /**
   * The chart of a level id (0..2^31-1; callers validate it), creating the inactive placeholder
   * (`Level <id>`, version `unknown`, constant 0) when the catalog has none. Safe when two uploads race on the same unknown level:
   * the insert skips an existing row, and the row is read back afterwards.
   */
  async ensurePlaceholderChart(levelId: number, manager?: EntityManager): Promise<ChartInfo> {
    if (!Number.isInteger(levelId) || levelId < 0 || levelId > LEVEL_ID_MAX)
      throw new RangeError(`Level id out of range: ${levelId}`);
    const known = await this.catalog.findChart(levelId, manager);
    if (known) return toChartInfo(known);
    await this.catalog.insertPlaceholderIfAbsent(placeholderChart(levelId), manager);
    const chart = await this.catalog.findChart(levelId, manager);
    if (!chart) throw new Error(`Chart ${levelId} vanished after insert`);
    return toChartInfo(chart);
  }
}
