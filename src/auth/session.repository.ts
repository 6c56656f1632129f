import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { ServerSessionEndReason, ServerSessionEntity } from './entities/server-session.entity';

export interface NewServerSession {
  serverId: number;
  tokenHash: string;
  tokenExpiresAt: Date;
  pluginVersion: number;
  pluginSha: string;
  clientIp: string | null;
}

/** Server sessions (and, with the player issue, the player sessions bound to them). */
@Injectable()
export class SessionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private serverSessions(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(ServerSessionEntity);
  }

  findServerSessionByTokenHash(tokenHash: string): Promise<ServerSessionEntity | null> {
    return this.serverSessions().findOne({ where: { tokenHash } });
  }

  /** Ends every open session of the server; returns the ids of the sessions ended. */
  async endOpenServerSessions(serverId: number, reason: ServerSessionEndReason, manager: EntityManager): Promise<string[]> {
    const result = await this.serverSessions(manager)
      .createQueryBuilder()
      .update()
      .set({ endedAt: () => 'now()', endReason: reason })
      .where('server_id = :serverId AND ended_at IS NULL', { serverId })
      .returning(['id'])
      .execute();
    return (result.raw as Array<{ id: string }>).map((row) => row.id);
  }

  async endServerSession(sessionId: string, reason: ServerSessionEndReason, manager: EntityManager): Promise<boolean> {
    const result = await this.serverSessions(manager).update({ id: sessionId, endedAt: IsNull() }, { endedAt: new Date(), endReason: reason });
    return (result.affected ?? 0) > 0;
  }

  async createServerSession(session: NewServerSession, manager: EntityManager): Promise<ServerSessionEntity> {
    const repo = this.serverSessions(manager);
    return repo.save(repo.create({ ...session, refreshedAt: null, endedAt: null, endReason: null }));
  }

  /**
   * Replaces the token of a live session, only if the presented token is still its current one
   * (two refreshes with the same token: one wins, the other gets 401).
   */
  async rotateServerToken(sessionId: string, currentHash: string, nextHash: string, expiresAt: Date): Promise<boolean> {
    const result = await this.serverSessions().update(
      { id: sessionId, tokenHash: currentHash, endedAt: IsNull() },
      { tokenHash: nextHash, tokenExpiresAt: expiresAt, refreshedAt: new Date() },
    );
    return (result.affected ?? 0) > 0;
  }
}
