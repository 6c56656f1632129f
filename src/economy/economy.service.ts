import { Injectable } from '@nestjs/common';
import { PlayerSessionService } from '../auth/player-session.service';
import type { ServerSessionContext } from '../auth/auth.types';
import { BalanceConflictError, NotFoundError } from '../common/errors/app-error';
import { formatLocalDateTime } from '../common/time';
import { isForeignKeyViolation } from '../database/pg-errors';
import { AdminEconomyResponse, EconomyResponse, RankingEntryResponse, SyncEconomyDto } from './dto/economy.dto';
import { EconomyRepository, TOP_BALANCES_MAX_LIMIT } from './economy.repository';
import { shownName } from '../common/player-name';

export const BALTOP_DEFAULT_LIMIT = 10;
export const BALTOP_MAX_LIMIT = TOP_BALANCES_MAX_LIMIT;
export const HISTORY_DEFAULT_LIMIT = 50;
export const HISTORY_MAX_LIMIT = 500;

@Injectable()
export class EconomyService {
  constructor(
    private readonly economy: EconomyRepository,
    private readonly playerSessions: PlayerSessionService,
  ) {}

  /**
   * POST /player/economy: overwrites the balance with the value sent (no arithmetic) and appends
   * the change to the history in the same transaction. 404 for a uid that names no player comes
   * before the token check (a token can only belong to an existing player). The balance row is
   * locked (or inserted) first, so concurrent calls for one player serialise: each one records
   * the value it replaced, and the last to commit holds. With `expectedWattHour` the write is a
   * compare-and-set under that lock: 409 CONFLICT (nothing written) unless the stored balance is
   * the expected one, so two servers writing one player's balance cannot land out of order.
   * All of it is one round trip (EconomyRepository.setBalance).
   */
  async setBalance(server: ServerSessionContext, body: SyncEconomyDto): Promise<EconomyResponse> {
    const expected = body.expectedWattHour ?? null;
    let result: { status: string; stored: string | null };
    try {
      result = await this.economy.setBalance({
        ...this.playerSessions.boundTokenCheck(body.accessToken, server),
        uid: body.uid,
        wattHour: body.wattHour,
        expected,
        serverId: server.serverId,
      });
    } catch (error) {
      // The player was deleted after the existence check.
      if (isForeignKeyViolation(error)) throw new NotFoundError(`No player with uid ${body.uid}`);
      throw error;
    }
    if (result.status === 'no_player') throw new NotFoundError(`No player with uid ${body.uid}`);
    if (result.status === 'conflict') throw new BalanceConflictError(expected as number, Number(result.stored));
    this.playerSessions.assertBoundTokenStatus(result.status);
    return { uid: Number(body.uid), wattHour: body.wattHour };
  }

  /** GET /server/baltop: ranks are positions in the returned order (ties are broken by uid). */
  async baltop(limit: number): Promise<RankingEntryResponse[]> {
    const rows = await this.economy.topBalances(limit);
    return rows.map((row, index) => ({
      rank: index + 1,
      uid: Number(row.uid),
      username: row.username,
      displayName: shownName(row.display_name, row.username),
      wattHour: Number(row.watt_hour),
    }));
  }

  /** The player's wattHour balance; 0 for a player who never synced one. */
  async balanceOf(uid: string): Promise<number> {
    return Number((await this.economy.balanceOf(uid)) ?? 0);
  }

  /** GET /admin/players/{uid}/economy: the balance and one page of its history, newest first. */
  async adminEconomy(uid: string, limit: number, before?: number): Promise<AdminEconomyResponse> {
    if (!(await this.economy.playerExists(uid))) throw new NotFoundError(`No player with uid ${uid}`);
    const balance = await this.economy.findBalance(uid);
    const page = await this.economy.listHistory(uid, limit + 1, before);
    const history = page.slice(0, limit).map((change) => ({
      id: Number(change.id),
      previousWattHour: change.previousWattHour === null ? null : Number(change.previousWattHour),
      wattHour: Number(change.wattHour),
      serverID: change.serverId,
      time: formatLocalDateTime(change.createdAt),
    }));
    return {
      uid: Number(uid),
      wattHour: balance ? Number(balance.wattHour) : null,
      updatedAt: balance ? formatLocalDateTime(balance.updatedAt) : null,
      history,
      nextBefore: page.length > limit ? history[history.length - 1].id : null,
    };
  }
}
