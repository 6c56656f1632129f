import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { activeBanPredicate } from '../player/player.repository';
import { BalanceHistoryEntity } from './entities/balance-history.entity';
import { PlayerBalanceEntity } from './entities/player-balance.entity';

/**
 * The first $1 balances by wattHour descending then uid ascending, players under an active ban
 * left out. It walks IDX_player_balance_rank and stops after $1 kept rows, so its cost depends on
 * the limit (plus banned players skipped on the way), not on the number of players.
 */
export const TOP_BALANCES_SQL = `SELECT bal.uid, p.username, p.display_name, bal.watt_hour
  FROM player_balance bal
  JOIN player p ON p.uid = bal.uid
 WHERE NOT ${activeBanPredicate('p')}
 ORDER BY bal.watt_hour DESC, bal.uid ASC
 LIMIT $1`;

export interface RankedBalanceRow {
  uid: string;
  username: string;
  display_name: string;
  watt_hour: string;
}

/**
 * Balances, their history and the wealth ranking. Reads the `player` table (names, existence)
 * and the ban predicate of the player module, never writes them.
 */
@Injectable()
export class EconomyRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private manager(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  async playerExists(uid: string): Promise<boolean> {
    const rows = await this.manager().query<unknown[]>('SELECT 1 FROM player WHERE uid = $1', [uid]);
    return rows.length > 0;
  }

  findBalance(uid: string): Promise<PlayerBalanceEntity | null> {
    return this.manager().getRepository(PlayerBalanceEntity).findOne({ where: { uid } });
  }

  /** The balance, locked for the rest of the transaction; null when the player has none yet. */
  async lockBalance(uid: string, manager: EntityManager): Promise<string | null> {
    const rows = await manager.query<{ watt_hour: string }[]>(
      'SELECT watt_hour FROM player_balance WHERE uid = $1 FOR UPDATE',
      [uid],
    );
    return rows.length > 0 ? rows[0].watt_hour : null;
  }

  /** Inserts the first balance; false when a row exists (a concurrent first sync won). */
  async insertBalanceIfAbsent(uid: string, wattHour: number, manager: EntityManager): Promise<boolean> {
    const rows = await manager.query<unknown[]>(
      `INSERT INTO player_balance (uid, watt_hour, updated_at) VALUES ($1, $2, now())
       ON CONFLICT (uid) DO NOTHING RETURNING uid`,
      [uid, wattHour],
    );
    return rows.length > 0;
  }

  async updateBalance(uid: string, wattHour: number, manager: EntityManager): Promise<void> {
    await manager.query('UPDATE player_balance SET watt_hour = $2, updated_at = now() WHERE uid = $1', [uid, wattHour]);
  }

  async appendHistory(
    change: { uid: string; previous: string | null; wattHour: number; serverId: number },
    manager: EntityManager,
  ): Promise<void> {
    await manager.query(
      'INSERT INTO balance_history (uid, previous_watt_hour, watt_hour, server_id) VALUES ($1, $2, $3, $4)',
      [change.uid, change.previous, change.wattHour, change.serverId],
    );
  }

  /** Newest first; `before` is an exclusive id cursor. */
  listHistory(uid: string, limit: number, before?: number): Promise<BalanceHistoryEntity[]> {
    const query = this.manager()
      .getRepository(BalanceHistoryEntity)
      .createQueryBuilder('h')
      .where('h.uid = :uid', { uid })
      .orderBy('h.id', 'DESC')
      .limit(limit);
    if (before !== undefined) query.andWhere('h.id < :before', { before });
    return query.getMany();
  }

  /** The first `limit` entries of the wealth ranking (TOP_BALANCES_SQL). */
  topBalances(limit: number): Promise<RankedBalanceRow[]> {
    return this.manager().query<RankedBalanceRow[]>(TOP_BALANCES_SQL, [limit]);
  }
}
