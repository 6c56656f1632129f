import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CatalogRepository } from './catalog.repository';
import { TitleInfo } from './catalog.types';
import { CollectionEntity } from './entities/collection.entity';

export function toTitleInfo(collection: CollectionEntity): TitleInfo {
  const properties = collection.properties;
  const description = properties.description;
  return {
    key: collection.key,
    title: typeof properties.title === 'string' ? properties.title : '',
    description: Array.isArray(description) ? description.map(String) : typeof description === 'string' ? description : '',
    rarity: typeof properties.rarity === 'string' ? properties.rarity : '',
    position: properties.position === true,
  };
}

@Injectable()
export class CatalogService {
  constructor(private readonly catalog: CatalogRepository) {}

  unlockedKeys(uid: string, manager?: EntityManager): Promise<string[]> {
    return this.catalog.unlockedKeys(uid, manager);
  }

  /** Title metadata of the keys the player has unlocked as `title` collections (others are absent). */
  async unlockedTitles(uid: string, keys: string[], manager?: EntityManager): Promise<Map<string, TitleInfo>> {
    const titles = await this.catalog.unlockedTitles(uid, [...new Set(keys)], manager);
    return new Map(titles.map((title) => [title.key, toTitleInfo(title)]));
  }
}
