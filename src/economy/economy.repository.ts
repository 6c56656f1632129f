import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { PreparedQueries } from '../database/prepared-queries';
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
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly prepared: PreparedQueries,
  ) {}

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

  /**
   * POST /player/economy in one round trip (`rhythmc_set_balance`, migrations/1795730000000-SyncsWriteOnlyChanges.ts):
   * the player exists (`no_player`), the player token is live, of this uid and server session
   * (its status otherwise); a balance that already is the value sent is answered with nothing
   * written; else the balance row locked or inserted, the compare-and-set (`conflict`, with the
   * stored balance), the overwrite and its history row.
   */
  async setBalance(write: {
    tokenHash: string;
    uid: string;
    serverSessionId: string;
    now: Date;
    wattHour: number;
    expected: number | null;
    serverId: number;
  }): Promise<{ status: string; stored: string | null }> {
    const rows = await this.prepared.run<{ status: string; stored: string | null }>(
      'economy_set_balance',
      'SELECT * FROM rhythmc_set_balance($1, $2, $3, $4, $5, $6, $7)',
      [write.tokenHash, write.uid, write.serverSessionId, write.now, write.wattHour, write.expected, write.serverId],
    );
    return rows[0];
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
