import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { GameServerEntity } from './entities/game-server.entity';
import { ServiceSettingEntity } from './entities/service-setting.entity';

export type SettingKey = 'maintenance' | 'plugin_policy' | 'session_handover';

@Injectable()
export class ServerRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private servers(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(GameServerEntity);
  }

  private settings(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(ServiceSettingEntity);
  }

  async createServer(server: Pick<GameServerEntity, 'name' | 'country' | 'ip'>, manager: EntityManager): Promise<GameServerEntity> {
    const repo = this.servers(manager);
    return repo.save(repo.create(server));
  }

  findServerById(id: number, manager?: EntityManager): Promise<GameServerEntity | null> {
    return this.servers(manager).findOne({ where: { id } });
  }

  /** The ids among `ids` that name a registered server. */
  async existingServerIds(ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await this.servers().find({ select: { id: true }, where: { id: In(ids) } });
    return rows.map((row) => row.id);
  }

  async getSetting<T>(key: SettingKey, manager?: EntityManager): Promise<T | null> {
    const row = await this.settings(manager).findOne({ where: { key } });
    return row ? (row.value as T) : null;
  }

  async putSetting<T extends object>(key: SettingKey, value: T): Promise<void> {
    await this.settings().upsert({ key, value, updatedAt: new Date() }, ['key']);
  }
}
