import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CredentialService } from '../auth/credential.service';
import { PlayerSessionService } from '../auth/player-session.service';
import { BadRequestError, NotFoundError } from '../common/errors/app-error';
import { EVENT_BUS, EventBus } from '../common/events/events';
import { keepKick, keptKickExpiry, kickFrame } from '../common/events/player-frames';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { shownName } from '../common/player-name';
import { formatLocalDateTime, parseLocalDateTime } from '../common/time';
import { isUniqueViolation } from '../database/pg-errors';
import { TransactionService } from '../database/transaction.service';
import { WebhookService } from '../webhooks/webhook.service';
import {
  BanPlayerDto,
  BanResponse,
  BanstateResponse,
  CreatedPlayerResponse,
  CreatePlayerDto,
} from './dto/admin-player.dto';
import { PlayerRepository } from './player.repository';

/** player_ban.message is varchar(512); the kick message shown in game. */
const MAX_KICK_MESSAGE_LENGTH = 512;

/**
 * `You are banned[: reason]`, cut to the column's 512 characters (counted as PostgreSQL does, in
 * code points) with an ellipsis: a reason of up to 512 characters would not fit after the prefix.
 */
export function defaultKickMessage(reason: string): string {
  const message = reason ? `You are banned: ${reason}` : 'You are banned';
  const characters = Array.from(message);
  return characters.length <= MAX_KICK_MESSAGE_LENGTH
    ? message
    : `${characters.slice(0, MAX_KICK_MESSAGE_LENGTH - 1).join('')}…`;
}

/**
 * What staff do to a player account: create it, issue its Net Token, ban, unban, set its warning
 * level. Called by PlayerAdminController (the admin API, the console and the CLI).
 */
@Injectable()
export class PlayerAdminService {
  constructor(
    private readonly players: PlayerRepository,
    private readonly credentials: CredentialService,
    private readonly sessions: PlayerSessionService,
    private readonly tx: TransactionService,
    @Inject(EVENT_BUS) private readonly events: EventBus,
    private readonly webhooks: WebhookService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async createPlayer(body: CreatePlayerDto): Promise<CreatedPlayerResponse> {
    try {
      const player = await this.players.create({
        username: body.username,
        uuid: body.uuid?.toLowerCase() ?? null,
        displayName: body.displayName ?? '',
      });
      return {
        uid: Number(player.uid),
        username: player.username,
        displayName: shownName(player.displayName, player.username),
        uuid: player.uuid,
      };
    } catch (error) {
      if (isUniqueViolation(error))
        throw BadRequestError.field('uuid', `${body.uuid} already belongs to another player`, 'label');
      throw error;
    }
  }

  async issueNetToken(uid: string): Promise<string> {
    return this.credentials.issueNetToken(uid);
  }

  /** Bans the player: revokes tokens, logs sessions out, then kicks them live (decisions.md §8). */
  async ban(uid: string, body: BanPlayerDto): Promise<BanResponse> {
    let until: Date | null = null;
    if (body.until !== undefined) {
      until = parseLocalDateTime(body.until);
      if (!until) throw BadRequestError.field('until', 'must be an ISO local date-time YYYY-MM-DDTHH:mm:ss');
      if (until.getTime() <= Date.now()) throw BadRequestError.field('until', 'must be in the future');
    }
    const reason = body.reason ?? '';
    const message = body.message || defaultKickMessage(reason);
    const kick = { id: randomUUID(), uid, message, reason, until: until ? formatLocalDateTime(until) : '' };
    const serverSessionIds = await this.tx.run(async (manager) => {
      const player = await this.players.lockByUid(uid, manager);
      if (!player) throw new NotFoundError(`No player with uid ${uid}`);
      await this.players.liftBan(uid, manager);
      await this.players.insertBan({ uid, reason, message, until }, manager);
      await this.webhooks.enqueue(
        'player.banned',
        randomUUID(),
        {
          player: { uid: Number(uid), username: player.username },
          reason,
          until: until ? formatLocalDateTime(until) : null,
        },
        manager,
      );
      const revoked = [...new Set(await this.sessions.revokePlayerAccess(uid, 'banned', manager))];
      // The kick is kept with the ban: it reaches a server whose socket reconnects even if this
      // process stops before the event goes out (the realtime outbox round delivers it then).
      await keepKick(manager, kick.id, revoked, kickFrame(kick), keptKickExpiry(this.config));
      return revoked;
    });
    await this.events.publish({ type: 'player.kicked', keep: true, serverSessionIds, ...kick });
    return { uid: Number(uid), reason, message, until: kick.until };
  }

  /** Lifts the ban in force; `player.unbanned` goes out only when there was one. */
  async unban(uid: string): Promise<void> {
    await this.tx.run(async (manager) => {
      const player = await this.players.lockByUid(uid, manager);
      if (!player) throw new NotFoundError(`No player with uid ${uid}`);
      if (await this.players.liftBan(uid, manager))
        await this.webhooks.enqueue(
          'player.unbanned',
          randomUUID(),
          { player: { uid: Number(uid), username: player.username } },
          manager,
        );
    });
  }

  async setBanstate(uid: string, banstate: number): Promise<BanstateResponse> {
    if (!(await this.players.findByUid(uid))) throw new NotFoundError(`No player with uid ${uid}`);
    await this.players.update(uid, { banstate });
    return { uid: Number(uid), banstate };
  }
}
