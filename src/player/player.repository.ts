import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, IsNull, QueryDeepPartialEntity } from 'typeorm';
import { PlayerBanEntity } from './entities/player-ban.entity';
import { PlayerEntity } from './entities/player.entity';

/** The one rule of an active ban, on the player_ban row aliased `ban`: not lifted, and permanent or not yet over. */
/** SQL condition: the ban row aliased `ban` is in force (not lifted, not expired). The one copy of the rule. */
export const activeBan = (ban: string) => `${ban}.lifted_at IS NULL AND (${ban}.until IS NULL OR ${ban}.until > now())`;

/** SQL predicate of an active ban of the player aliased `alias` (for orderings in other modules' queries). */
export const activeBanPredicate = (alias: string) =>
  `EXISTS (SELECT 1 FROM player_ban b WHERE b.uid = ${alias}.uid AND ${activeBan('b')})`;

@Injectable()
export class PlayerRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private players(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(PlayerEntity);
  }

  private bans(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(PlayerBanEntity);
  }

  findByUid(uid: string, manager?: EntityManager): Promise<PlayerEntity | null> {
    return this.players(manager).findOne({ where: { uid } });
  }

  findByUuid(uuid: string, manager?: EntityManager): Promise<PlayerEntity | null> {
    return this.players(manager).findOne({ where: { uuid } });
  }

  /** Locks the player row for the rest of the transaction (serialises logins of one account). */
  lockByUid(uid: string, manager: EntityManager): Promise<PlayerEntity | null> {
    return this.players(manager)
      .createQueryBuilder('p')
      .where('p.uid = :uid', { uid })
      .setLock('pessimistic_write')
      .getOne();
  }

  async create(
    player: Pick<PlayerEntity, 'username' | 'uuid' | 'displayName'>,
    manager?: EntityManager,
  ): Promise<PlayerEntity> {
    const repo = this.players(manager);
    return repo.save(repo.create({ ...player, extraOptions: {} }));
  }

  /** Inserts the player of a genuine account seen for the first time; a concurrent insert wins quietly. */
  async insertOnlinePlayerIfAbsent(uuid: string, username: string): Promise<void> {
    await this.players()
      .createQueryBuilder()
      .insert()
      .values({ uuid, username, displayName: '', extraOptions: {} })
      .orIgnore()
      .execute();
  }

  async update(
    uid: string,
    changes: Partial<Omit<PlayerEntity, 'uid' | 'createdAt' | 'updatedAt'>>,
    manager?: EntityManager,
  ): Promise<void> {
    // jsonb columns typed as records do not satisfy TypeORM's deep-partial type; the shape is the entity's.
    await this.players(manager).update({ uid }, changes as QueryDeepPartialEntity<PlayerEntity>);
  }

  findActiveBan(uid: string, manager?: EntityManager): Promise<PlayerBanEntity | null> {
    return this.bans(manager)
      .createQueryBuilder('b')
      .where(`b.uid = :uid AND ${activeBan('b')}`, { uid })
      .getOne();
  }

  /** Lifts the player's unlifted ban (active or already run out); returns whether there was one. */
  async liftBan(uid: string, manager?: EntityManager): Promise<boolean> {
    const result = await this.bans(manager).update({ uid, liftedAt: IsNull() }, { liftedAt: new Date() });
    return (result.affected ?? 0) > 0;
  }

  async insertBan(
    ban: Pick<PlayerBanEntity, 'uid' | 'reason' | 'message' | 'until'>,
    manager: EntityManager,
  ): Promise<PlayerBanEntity> {
    const repo = this.bans(manager);
    return repo.save(repo.create({ ...ban, liftedAt: null }));
  }
}
