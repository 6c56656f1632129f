import { Injectable } from '@nestjs/common';
import { PlayerSessionService } from '../auth/player-session.service';
import type { ServerSessionContext } from '../auth/auth.types';
import { BalanceConflictError, NotFoundError } from '../common/errors/app-error';
import { formatLocalDateTime } from '../common/time';
import { isForeignKeyViolation } from '../database/pg-errors';
import { TransactionService } from '../database/transaction.service';
import { AdminEconomyResponse, EconomyResponse, RankingEntryResponse, SyncEconomyDto } from './dto/economy.dto';
import { EconomyRepository } from './economy.repository';
import { shownName } from '../common/player-name';

export const BALTOP_DEFAULT_LIMIT = 10;
export const BALTOP_MAX_LIMIT = 100;
export const HISTORY_DEFAULT_LIMIT = 50;
export const HISTORY_MAX_LIMIT = 500;

/** The compare-and-set of an ordered balance write: null expects nothing; a player never synced holds 0. */
function assertExpected(expected: number | null, stored: number): void {
  if (expected !== null && expected !== stored) throw new BalanceConflictError(expected, stored);
}

@Injectable()
export class EconomyService {
  constructor(
    private readonly economy: EconomyRepository,
    private readonly playerSessions: PlayerSessionService,
    private readonly tx: TransactionService,
  ) {}

  /**
   * POST /player/economy: overwrites the balance with the value sent (no arithmetic) and appends
   * the change to the history in the same transaction. 404 for a uid that names no player comes
   * before the token check (a token can only belong to an existing player). The balance row is
   * locked (or inserted) first, so concurrent calls for one player serialise: each one records
   * the value it replaced, and the last to commit holds. With `expectedWattHour` the write is a
   * compare-and-set under that lock: 409 CONFLICT (nothing written) unless the stored balance is
   * the expected one, so two servers writing one player's balance cannot land out of order.
   */
  async setBalance(server: ServerSessionContext, body: SyncEconomyDto): Promise<EconomyResponse> {
    if (!(await this.economy.playerExists(body.uid))) throw new NotFoundError(`No player with uid ${body.uid}`);
    const session = await this.playerSessions.resolveBoundPlayerToken(body.accessToken, body.uid, server);
    const uid = session.uid;
    const expected = body.expectedWattHour ?? null;
    try {
      await this.tx.run(async (manager) => {
        let previous = await this.economy.lockBalance(uid, manager);
        if (previous === null) {
          assertExpected(expected, 0);
          if (await this.economy.insertBalanceIfAbsent(uid, body.wattHour, manager)) {
            await this.economy.appendHistory(
              { uid, previous: null, wattHour: body.wattHour, serverId: server.serverId },
              manager,
            );
            return;
          }
          // Another first sync of this player committed in between: lock its row and replace it.
          previous = await this.economy.lockBalance(uid, manager);
          if (previous === null) throw new Error('Balance row vanished after a conflicting insert');
        }
        assertExpected(expected, Number(previous));
        await this.economy.updateBalance(uid, body.wattHour, manager);
        await this.economy.appendHistory(
          { uid, previous, wattHour: body.wattHour, serverId: server.serverId },
          manager,
        );
      });
    } catch (error) {
      // The player was deleted after the existence check.
      if (isForeignKeyViolation(error)) throw new NotFoundError(`No player with uid ${body.uid}`);
      throw error;
    }
    return { uid: Number(uid), wattHour: body.wattHour };
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
