import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { CollectionEntity } from './entities/collection.entity';
import { PlayerCollectionEntity } from './entities/player-collection.entity';

@Injectable()
export class CatalogRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

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
}
