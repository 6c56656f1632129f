import { randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PlayerSessionService } from '../auth/player-session.service';
import { BadRequestError, NotFoundError, UnavailableError } from '../common/errors/app-error';
import { EVENT_BUS, EventBus } from '../common/events/events';
import { isForeignKeyViolation } from '../database/pg-errors';
import { TransactionService } from '../database/transaction.service';
import { RatingRecomputeService } from '../upload/recompute/rating-recompute.service';
import { PlayerErasureResponse, PlayerExportResponse } from './dto/player-privacy.dto';
import { PlayerDataRepository } from './player-data.repository';

export const EXPORT_FORMAT = 'rhythmc-player-export/1';

/** The kick_player message to the game server an erased player was on. */
export const ERASED_KICK_MESSAGE = 'Your account was erased';

/** How long an erasure tries again while an archive or a history snapshot runs (one takes seconds, at 1M players tens). */
const COPIES_WAIT_MS = 30_000;
const COPIES_RETRY_MS = 250;

/** An archive or the history snapshot runs now: the erasure rolled back, to be tried again. */
class CopiesRunning extends Error {}

/**
 * A player's data on request (docs/operations.md "Answering a privacy request"): the export, one
 * JSON document of every row that refers to them, and the erasure, one transaction that deletes or
 * anonymises those rows (player-data.map.ts), drops their ranks on every instance, kicks them off
 * the game server they are on and leaves a tombstone (docs/decisions.md "Erasing a player").
 */
@Injectable()
export class PrivacyService {
  constructor(
    private readonly data: PlayerDataRepository,
    private readonly sessions: PlayerSessionService,
    private readonly ranks: RatingRecomputeService,
    private readonly tx: TransactionService,
    @Inject(EVENT_BUS) private readonly events: EventBus,
  ) {}

  async exportPlayer(uid: string): Promise<PlayerExportResponse> {
    const tables = await this.tx.run((manager) => this.data.exportRows(uid, manager));
    if (!tables) throw await this.notFound(uid);
    return { format: EXPORT_FORMAT, uid: Number(uid), exportedAt: new Date().toISOString(), tables };
  }

  async erasePlayer(uid: string, confirm: string): Promise<PlayerErasureResponse> {
    const pseudonym = `erased-${randomBytes(6).toString('hex')}`;
    const deadline = Date.now() + COPIES_WAIT_MS;
    for (;;) {
      try {
        return await this.eraseOnce(uid, confirm, pseudonym);
      } catch (error) {
        if (!(error instanceof CopiesRunning)) throw error;
        if (Date.now() >= deadline)
          throw new UnavailableError(
            'A period archive or the rating history snapshot is running; erase again in a minute',
            { 'Retry-After': '60' },
          );
        await new Promise((resolve) => setTimeout(resolve, COPIES_RETRY_MS));
      }
    }
  }

  private async eraseOnce(uid: string, confirm: string, pseudonym: string): Promise<PlayerErasureResponse> {
    const outcome = await this.ranks
      .removePlayer(uid, {
        check: async (manager) => {
          // Before any row lock: no archive or history snapshot may run beside the erasure (it
          // would copy the player back); when one runs, the whole erasure is tried again shortly.
          if (!(await this.data.holdCopies(manager))) throw new CopiesRunning();
          const player = await this.data.findPlayer(uid, manager);
          if (!player) throw await this.notFound(uid, manager);
          if (confirm !== player.username)
            throw BadRequestError.field('confirm', "must be the player's current username, exactly");
        },
        erase: async (manager) => {
          // Gone since the check: another erasure of the same player committed first.
          if (!(await this.data.lockPlayer(uid, manager))) throw await this.notFound(uid, manager);
          const serverSessionIds = await this.sessions.revokePlayerAccess(uid, 'erased', manager);
          const rows = await this.data.erase(uid, pseudonym, manager);
          return { serverSessionIds, rows };
        },
      })
      .catch(async (error: unknown) => {
        // The rating row's insert met a player an erasure running alongside had just deleted.
        if (isForeignKeyViolation(error)) throw await this.notFound(uid);
        throw error;
      });
    // Sent to the sockets open now, never kept in the outbox: a kept frame would be a new row
    // naming the erased uid, and the player's session is gone whether or not the server hears it.
    if (outcome.serverSessionIds.length > 0)
      await this.events.publish({
        type: 'player.kicked',
        id: randomUUID(),
        keep: false,
        uid,
        serverSessionIds: [...new Set(outcome.serverSessionIds)],
        message: ERASED_KICK_MESSAGE,
        reason: 'erased',
        until: '',
      });
    return { uid: Number(uid), pseudonym, rows: outcome.rows };
  }

  /** Inside a transaction, through its manager: on the embedded database a query outside it would wait. */
  private async notFound(uid: string, manager?: EntityManager): Promise<NotFoundError> {
    const erasure = await this.data.findErasure(uid, manager);
    return new NotFoundError(
      erasure ? `Player ${uid} was erased at ${erasure.erasedAt.toISOString()}` : `No player with uid ${uid}`,
    );
  }
}
