import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ServerCredentialEntity } from './entities/server-credential.entity';

@Injectable()
export class CredentialRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private servers(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(ServerCredentialEntity);
  }

  async findServerIdByBootstrapHash(tokenHash: string): Promise<number | null> {
    const row = await this.servers().findOne({ where: { tokenHash }, select: { serverId: true } });
    return row?.serverId ?? null;
  }

  /** Sets the server's bootstrap token, replacing the previous one. */
  async putBootstrapHash(serverId: number, tokenHash: string, manager?: EntityManager): Promise<void> {
    await this.servers(manager).upsert({ serverId, tokenHash, issuedAt: new Date() }, ['serverId']);
  }

  /** Row lock that serialises logins of one server. */
  async lockServer(serverId: number, manager: EntityManager): Promise<boolean> {
    const rows = await manager
      .getRepository(ServerCredentialEntity)
      .createQueryBuilder('c')
      .select('c.server_id')
      .where('c.server_id = :serverId', { serverId })
      .setLock('pessimistic_write')
      .getRawMany();
    return rows.length > 0;
  }
}
