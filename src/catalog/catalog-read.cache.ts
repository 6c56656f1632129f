import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { EVENT_BUS, EventBus } from '../common/events/events';
import { PreparedJson, prepareJson } from '../common/http/prepared-json';
import { CatalogRepository } from './catalog.repository';

export type CatalogList = 'charts' | 'collections';

/** How often a read compares the cached generation with the database (a lost event's longest effect). */
export const GENERATION_CHECK_MS = 1_000;

/**
 * The listed catalogs (GET /server/charts, GET /server/collections) as ready-to-send JSON bytes.
 * Dropped on this instance as soon as an admin write commits here, on the others when its
 * `catalog.changed` event arrives, and anywhere at most GENERATION_CHECK_MS after a write whose
 * event was lost (the generation row). Built again by the next read.
 */
@Injectable()
export class CatalogReadCache implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Catalog');
  private readonly entries = new Map<CatalogList, Promise<PreparedJson>>();
  /** Bumped by every drop: a build that started before one must not be kept after it. */
  private epoch = 0;
  private generation: string | null = null;
  private checkedAt = 0;
  private checking: Promise<void> | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly catalog: CatalogRepository,
    @Inject(EVENT_BUS) private readonly events: EventBus,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.events.subscribe((event) => {
      if (event.type === 'catalog.changed') this.drop();
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  async get(list: CatalogList, build: () => Promise<unknown>): Promise<PreparedJson> {
    if (Date.now() - this.checkedAt >= GENERATION_CHECK_MS) await this.checkGeneration();
    const cached = this.entries.get(list);
    if (cached) return cached;
    const epoch = this.epoch;
    const building = build().then(prepareJson);
    this.entries.set(list, building);
    try {
      return await building;
    } catch (error) {
      if (this.entries.get(list) === building) this.entries.delete(list);
      throw error;
    } finally {
      if (epoch !== this.epoch && this.entries.get(list) === building) this.entries.delete(list);
    }
  }

  /** After a catalog write committed: drop here, then tell the other instances. */
  async changed(): Promise<void> {
    this.drop();
    await this.events.publish({ type: 'catalog.changed' });
  }

  private drop(): void {
    this.epoch++;
    this.entries.clear();
    this.checkedAt = 0;
  }

  private checkGeneration(): Promise<void> {
    this.checking ??= (async () => {
      try {
        const generation = await this.catalog.generation();
        if (this.generation !== null && generation !== this.generation) {
          this.logger.debug(`Catalog generation ${this.generation} → ${generation}: cached lists dropped`);
          this.drop();
        }
        this.generation = generation;
        this.checkedAt = Date.now();
      } finally {
        this.checking = null;
      }
    })();
    return this.checking;
  }
}
