import { Injectable } from '@nestjs/common';
import { IssuedExpiringToken, CredentialService } from '../auth/credential.service';
import { PlayerSessionService } from '../auth/player-session.service';
import { boundTokenError } from '../auth/bound-token.rule';
import type { ServerSessionContext } from '../auth/auth.types';
import { CatalogService } from '../catalog/catalog.service';
import type { TitleInfo } from '../catalog/catalog.types';
import { BadRequestError, UnauthorizedError } from '../common/errors/app-error';
import { shownName } from '../common/player-name';
import { isJsonObject } from '../common/validation/json-object';
import { TransactionService } from '../database/transaction.service';
import { PlayerOptionsDto } from './dto/player-options.dto';
import { toPlayerProfile } from './dto/player-profile.mapper';
import { PlayerProfileResponse } from './dto/player-profile.response';
import { PlayerEntity } from './entities/player.entity';
import { mergeExtraOptions } from './player-options.rules';
import { PlayerRepository } from './player.repository';

export interface ChatIdentity {
  uid: number;
  username: string;
  displayName: string;
  prefix: TitleInfo | null;
  suffix: TitleInfo | null;
}

/**
 * A logged-in player's own account as the game server changes and shows it: options and titles
 * (POST /player/options), the identity shown beside a chat line. The logins are
 * PlayerLoginService's, what staff do PlayerAdminService's.
 */
@Injectable()
export class PlayerService {
  constructor(
    private readonly players: PlayerRepository,
    private readonly credentials: CredentialService,
    private readonly sessions: PlayerSessionService,
    private readonly catalog: CatalogService,
    private readonly tx: TransactionService,
  ) {}

  /** POST /player/options: merge the options, validate the titles, rotate or revoke the resume token. */
  async updateOptions(server: ServerSessionContext, body: PlayerOptionsDto): Promise<PlayerProfileResponse> {
    const session = await this.sessions.resolveBoundPlayerToken(body.accessToken, body.uid, server);
    const core = this.parseCoreOptions(body.options);
    await this.assertUnlockedTitles(session.uid, { playerPrefix: body.playerPrefix, playerSuffix: body.playerSuffix });

    return this.tx.run(async (manager) => {
      const player = await this.players.lockByUid(session.uid, manager);
      if (!player) throw new UnauthorizedError('Unknown player');
      const merged = mergeExtraOptions(player.extraOptions, body.options);
      if ('refused' in merged) throw BadRequestError.field('options', merged.refused);
      const changes: Partial<PlayerEntity> = {
        extraOptions: merged.extra,
        ...core,
        ...(body.playerPrefix !== undefined ? { prefixKey: body.playerPrefix || null } : {}),
        ...(body.playerSuffix !== undefined ? { suffixKey: body.playerSuffix || null } : {}),
      };
      await this.players.update(player.uid, changes, manager);
      // The token was checked before the lock: a ban, a takeover or a logout that committed since
      // ended the session, and this sync must not write options nor mint a resume token from it.
      if (!(await this.sessions.markPlayerSessionRenewed(session, manager)))
        throw boundTokenError('invalid_token') as UnauthorizedError;
      const updated: PlayerEntity = { ...player, ...changes };

      let resume: IssuedExpiringToken | null = null;
      if (updated.continueEnabled)
        resume = await this.credentials.issueResumeToken(player.uid, session.proven, manager);
      else await this.credentials.revokeResumeToken(player.uid, manager);

      const collections = await this.catalog.unlockedKeys(player.uid, manager);
      return toPlayerProfile(
        updated,
        updated.dataVersion,
        { token: body.accessToken, expiresIn: this.sessions.secondsLeft(session) },
        resume,
        collections,
      );
    });
  }

  /**
   * Who is chatting (decisions.md §7): the player must have a live session bound to the calling
   * server session (401 otherwise); answers names and the selected titles' metadata.
   */
  async chatIdentity(uid: string, serverSessionId: string): Promise<ChatIdentity> {
    if (!(await this.sessions.isPlayerBoundTo(uid, serverSessionId))) {
      throw new UnauthorizedError('The player has no live session on this server');
    }
    const player = await this.players.findByUid(uid);
    if (!player) throw new UnauthorizedError('Unknown player');
    const keys = [player.prefixKey, player.suffixKey].filter((key): key is string => key !== null);
    const titles = await this.catalog.unlockedTitles(uid, keys);
    return {
      uid: Number(player.uid),
      username: player.username,
      displayName: shownName(player.displayName, player.username),
      prefix: player.prefixKey ? (titles.get(player.prefixKey) ?? null) : null,
      suffix: player.suffixKey ? (titles.get(player.suffixKey) ?? null) : null,
    };
  }

  /** playerPrefix / playerSuffix must name `title` collections the player has unlocked, or be '' (decisions.md §4). */
  private async assertUnlockedTitles(
    uid: string,
    selection: Record<'playerPrefix' | 'playerSuffix', string | undefined>,
  ): Promise<void> {
    const chosen = Object.entries(selection).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '',
    );
    if (chosen.length === 0) return;
    const unlocked = await this.catalog.unlockedTitles(
      uid,
      chosen.map(([, key]) => key),
    );
    const refused = chosen.filter(([, key]) => !unlocked.has(key));
    if (refused.length > 0) {
      throw new BadRequestError(
        `${refused.map(([field]) => field).join(', ')}: not an unlocked title collection of this player (${refused.map(([, key]) => key).join(', ')})`,
        refused.map(([field, key]) => ({ field, message: `not an unlocked title collection of this player (${key})` })),
      );
    }
  }

  private parseCoreOptions(options: Record<string, unknown>): Partial<PlayerEntity> {
    const core: Partial<PlayerEntity> = {};
    if ('continueEnabled' in options) {
      if (typeof options.continueEnabled !== 'boolean')
        throw BadRequestError.field('options.continueEnabled', 'must be a boolean');
      core.continueEnabled = options.continueEnabled;
    }
    if ('sound' in options) {
      if (!isJsonObject(options.sound)) throw BadRequestError.field('options.sound', 'must be an object');
      core.sound = options.sound;
    }
    if ('songSelectionState' in options) {
      if (!isJsonObject(options.songSelectionState))
        throw BadRequestError.field('options.songSelectionState', 'must be an object');
      core.songSelectionState = options.songSelectionState;
    }
    return core;
  }
}
