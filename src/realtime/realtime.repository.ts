import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { WsConnectionEntity } from './entities/ws-connection.entity';

/** A connection is listed while open and seen by its instance within this many seconds. */
export const CONNECTION_STALE_SECONDS = 90;

@Injectable()
export class RealtimeRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get connections() {
    return this.dataSource.getRepository(WsConnectionEntity);
  }

  async recordOpen(connection: Omit<WsConnectionEntity, 'closedAt' | 'closeCode' | 'lastSeenAt'>): Promise<void> {
    await this.connections.insert({ ...connection, lastSeenAt: connection.connectedAt, closedAt: null, closeCode: null });
  }

  async recordClose(id: string, code: number): Promise<void> {
    await this.connections.update({ id, closedAt: IsNull() }, { closedAt: new Date(), closeCode: code });
  }

  async touchInstance(instanceId: string): Promise<void> {
    await this.connections.update({ instanceId, closedAt: IsNull() }, { lastSeenAt: new Date() });
  }

  listOpen(): Promise<WsConnectionEntity[]> {
    return this.connections
      .createQueryBuilder('c')
      .where('c.closed_at IS NULL')
      .andWhere(`c.last_seen_at > now() - make_interval(secs => :stale)`, { stale: CONNECTION_STALE_SECONDS })
      .orderBy('c.connected_at', 'ASC')
      .getMany();
  }
}
