import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { PlayerCredentialEntity } from './entities/player-credential.entity';
import { PlayerResumeTokenEntity } from './entities/player-resume-token.entity';
import { ServerCredentialEntity } from './entities/server-credential.entity';

/** Long-lived credentials: server bootstrap tokens, player Net Tokens, player resume tokens. */
@Injectable()
export class CredentialRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo<T extends ServerCredentialEntity | PlayerCredentialEntity | PlayerResumeTokenEntity>(
    entity: new () => T,
    manager?: EntityManager,
  ) {
    return (manager ?? this.dataSource.manager).getRepository(entity);
  }

  async findServerIdByBootstrapHash(tokenHash: string): Promise<number | null> {
    const row = await this.repo(ServerCredentialEntity).findOne({ where: { tokenHash }, select: { serverId: true } });
    return row?.serverId ?? null;
  }

  /** Sets the server's bootstrap token, replacing the previous one. */
  async putBootstrapHash(serverId: number, tokenHash: string, manager?: EntityManager): Promise<void> {
    await this.repo(ServerCredentialEntity, manager).upsert({ serverId, tokenHash, issuedAt: new Date() }, [
      'serverId',
    ]);
  }

  /** Row lock that serialises logins of one server; false when its bootstrap token is no longer `tokenHash`. */
  async lockServer(serverId: number, tokenHash: string, manager: EntityManager): Promise<boolean> {
    const rows = await this.repo(ServerCredentialEntity, manager)
      .createQueryBuilder('c')
      .select('c.server_id')
      .where('c.server_id = :serverId AND c.token_hash = :tokenHash', { serverId, tokenHash })
      .setLock('pessimistic_write')
      .getRawMany();
    return rows.length > 0;
  }

  async findUidByNetTokenHash(tokenHash: string): Promise<string | null> {
    const row = await this.repo(PlayerCredentialEntity).findOne({ where: { tokenHash }, select: { uid: true } });
    return row?.uid ?? null;
  }

  /** Sets the player's Net Token, replacing the previous one. */
  async putNetTokenHash(uid: string, tokenHash: string): Promise<void> {
    await this.repo(PlayerCredentialEntity).upsert({ uid, tokenHash, issuedAt: new Date() }, ['uid']);
  }

  /** Sets the player's one live resume token, replacing the previous one; `proven`: issued to a proven session. */
  async putResumeTokenHash(
    uid: string,
    token: { hash: string; expiresAt: Date; proven: boolean },
    manager: EntityManager,
  ): Promise<void> {
    await this.repo(PlayerResumeTokenEntity, manager).upsert(
      { uid, tokenHash: token.hash, expiresAt: token.expiresAt, proven: token.proven, issuedAt: new Date() },
      ['uid'],
    );
  }

  /**
   * The player's resume token of this hash if it is still theirs and not expired (the database's
   * clock), with whether it was issued to a proven session; null when it was rotated, revoked or
   * ran out. Read under the player's row lock, it sees what a login before this one committed.
   */
  async currentResumeToken(
    tokenHash: string,
    uid: string,
    manager: EntityManager,
  ): Promise<{ proven: boolean } | null> {
    const rows = await manager.query<Array<{ proven: boolean }>>(
      'SELECT proven FROM player_resume_token WHERE token_hash = $1 AND uid = $2 AND expires_at > now()',
      [tokenHash, uid],
    );
    return rows[0] ?? null;
  }

  async deleteResumeToken(uid: string, manager: EntityManager): Promise<void> {
    await this.repo(PlayerResumeTokenEntity, manager).delete({ uid });
  }
}
