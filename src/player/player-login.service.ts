import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CredentialService } from '../auth/credential.service';
import { PlayerSessionService } from '../auth/player-session.service';
import type { LivePlayerSession, ServerSessionContext } from '../auth/auth.types';
import type { PlayerLoginMode } from '../auth/entities/player-session.entity';
import { CatalogService } from '../catalog/catalog.service';
import { BannedError, ForbiddenError, SessionConflictError, UnauthorizedError } from '../common/errors/app-error';
import { EVENT_BUS, EventBus } from '../common/events/events';
import { NetTokenGuesses } from '../common/throttle/net-token-guesses';
import { formatLocalDateTime } from '../common/time';
import { TransactionService } from '../database/transaction.service';
import { ServerService } from '../server/server.service';
import { PlayerLoginDto, USERNAME_PATTERN } from './dto/player-login.dto';
import { PlayerLogoutDto } from './dto/player-options.dto';
import { toPlayerProfile } from './dto/player-profile.mapper';
import { PlayerProfileResponse } from './dto/player-profile.response';
import { PlayerEntity } from './entities/player.entity';
import { IdentityProviderClient } from './identity-provider.client';
import { PlayerRepository } from './player.repository';
import { loginProves, mayTakeOver } from './session-proof.rule';

/** The kick_player message to the server a player left by joining another server of the same network. */
export const HANDOVER_KICK_MESSAGE = 'You joined another server of the network';

/** The kick_player message to a server whose session without proof a login with proof took over. */
export const TAKEOVER_KICK_MESSAGE = 'Your account logged in on another server with its Net Token or resume token';

/** The 401 of a login whose server session ended while it was under way (the guard's words for an ended one). */
const SERVER_SESSION_ENDED = 'Invalid or expired server access token';

/** Logins again with the setting read afresh when the one-round-trip login found another in force. */
const SETTING_CHANGED_RETRIES = 3;

/** The login modes that can prove ownership (src/player/session-proof.rule.ts). */
type ProofMode = 'TOKEN' | 'OFFLINE_REFRESH';

/** A live session the transactional login ended: handed over inside one network, or taken over with proof. */
type EndedSession =
  | { reason: 'handover'; uid: string; live: LivePlayerSession }
  | { reason: 'takeover'; uid: string; live: LivePlayerSession; proof: ProofMode };

/** The transactional login's result: the profile, or the live session that keeps the login out (409). */
type TransactionalLogin =
  { profile: PlayerProfileResponse; ended: EndedSession | null } | { conflict: LivePlayerSession };

/**
 * A player's session with a game server: the three logins (ONLINE through the identity provider,
 * TOKEN with a Net Token, OFFLINE_REFRESH with a resume token) and what they share (ban before
 * conflict, handover and takeover of a live session), `resume_session` on the socket, logout.
 * Called by the game server: PlayerController and the realtime gateway.
 */
@Injectable()
export class PlayerLoginService {
  private readonly logger = new Logger('Player');
  private readonly takeoverCounts: Record<ProofMode, number> = { TOKEN: 0, OFFLINE_REFRESH: 0 };

  constructor(
    private readonly players: PlayerRepository,
    private readonly credentials: CredentialService,
    private readonly sessions: PlayerSessionService,
    private readonly catalog: CatalogService,
    private readonly identity: IdentityProviderClient,
    private readonly tx: TransactionService,
    @Inject(EVENT_BUS) private readonly events: EventBus,
    private readonly netTokenGuesses: NetTokenGuesses,
    private readonly servers: ServerService,
  ) {}

  /**
   * POST /player/login: identify by mode, then ban (430) before conflict (409), then open the
   * session. A live session on another server of the same network is handed over instead of 409
   * when the session-handover setting allows it; that server is then told to kick the player.
   *
   * One round trip in the usual case (PlayerRepository.loginInOneRoundTrip: the checks and writes
   * of the transactional path below, in one database function); when the player has a live session
   * that function writes nothing and the transactional path decides (409 or handover).
   */
  async login(server: ServerSessionContext, body: PlayerLoginDto): Promise<PlayerProfileResponse> {
    const credential = await this.loginCredential(server, body);
    const now = new Date();
    const session = this.sessions.newSessionToken(now);
    const resume = this.credentials.newResumeToken(now);
    const call = {
      mode: body.mode,
      uid: credential.uid ?? null,
      uuid: credential.uuid ?? null,
      username: credential.username ?? null,
      resumeHash: credential.resumeHash ?? null,
      serverSessionId: server.sessionId,
      tokenHash: session.hash,
      tokenExpiresAt: session.expiresAt,
      version: body.version,
      newResumeHash: resume.hash,
      resumeExpiresAt: resume.expiresAt,
      now,
    };
    // The home server moves only to another scope (group or country); the group is computed here
    // from the setting this instance last read, which the statement checks is still in force.
    let result = await this.players.loginInOneRoundTrip({
      ...call,
      home: await this.servers.loginHomeGroup(server.serverId),
    });
    for (let retry = 0; result.status === 'setting_changed' && retry < SETTING_CHANGED_RETRIES; retry++)
      result = await this.players.loginInOneRoundTrip({
        ...call,
        home: await this.servers.loginHomeGroup(server.serverId, true),
      });
    switch (result.status) {
      case 'ok':
        return toPlayerProfile(
          result.player,
          result.previousVersion,
          { token: session.token, expiresIn: session.expiresIn },
          result.resumeIssued ? { token: resume.token, expiresIn: resume.expiresIn } : null,
          result.collections,
        );
      case 'live':
        return this.loginInTransaction(server, body, {
          uid: result.uid,
          ...(credential.username !== undefined ? { username: credential.username } : {}),
          ...(credential.resumeHash !== undefined ? { resumeHash: credential.resumeHash } : {}),
        });
      case 'banned':
        throw new BannedError(result.reason, result.until ? formatLocalDateTime(result.until) : '');
      case 'no_resume':
        throw new UnauthorizedError('Invalid or expired resume token');
      case 'no_continue':
        throw new UnauthorizedError('Offline refresh is not enabled for this player');
      case 'unknown_player':
        throw new UnauthorizedError('Unknown player');
      case 'server_session_ended':
        throw new UnauthorizedError(SERVER_SESSION_ENDED);
      case 'vanished':
        throw new Error('Player vanished after creation');
      case 'setting_changed':
        throw new Error('The session-handover setting kept changing during a login');
    }
  }
  /**
   * The transactional login, for a player whose session is live: a handover (the holder is a
   * server of the same network), a takeover (the login proves ownership and the holder's session
   * did not), or 409 (counted against the servers concerned when another server holds the player).
   */
  private async loginInTransaction(
    server: ServerSessionContext,
    body: PlayerLoginDto,
    identified: { uid: string; username?: string; resumeHash?: string },
  ): Promise<PlayerProfileResponse> {
    const outcome = await this.tx.run(async (manager): Promise<TransactionalLogin> => {
      // As rhythmc_player_login: the open server session share-locked first, so that ending it
      // waits for this login and then logs out the session it opens.
      if (!(await this.sessions.shareOpenServerSession(server.sessionId, manager)))
        throw new UnauthorizedError(SERVER_SESSION_ENDED);
      await this.players.lockRatingFirst(identified.uid, manager);
      const player = await this.players.lockByUid(identified.uid, manager);
      if (!player) throw new UnauthorizedError('Unknown player');
      if (body.mode === 'OFFLINE_REFRESH' && !player.continueEnabled) {
        throw new UnauthorizedError('Offline refresh is not enabled for this player');
      }
      await this.assertNotBanned(player.uid, manager);
      // The resume token was checked before this lock: a login with the same token that committed
      // meanwhile rotated it, and a replay must not open a second session from it.
      let resumeProven = false;
      if (identified.resumeHash !== undefined) {
        const resume = await this.credentials.currentResumeToken(identified.resumeHash, player.uid, manager);
        if (!resume) throw new UnauthorizedError('Invalid or expired resume token');
        resumeProven = resume.proven;
      }
      const proven = loginProves(body.mode, resumeProven);
      const live = await this.sessions.livePlayerSession(player.uid, manager);
      let ended: EndedSession | null = null;
      if (live) {
        if (await this.servers.mayHandOver(live.serverId, server.serverId, body.mode, manager))
          ended = { reason: 'handover', uid: player.uid, live };
        else if (mayTakeOver(live, { proven, serverSessionId: server.sessionId }))
          // A login that proves is never ONLINE.
          ended = {
            reason: 'takeover',
            uid: player.uid,
            live,
            proof: body.mode === 'TOKEN' ? 'TOKEN' : 'OFFLINE_REFRESH',
          };
        if (!ended) return { conflict: live };
        await this.sessions.endPlayerSession(player.uid, live.sessionId, ended.reason, manager);
      }

      const session = await this.sessions.openPlayerSession(
        player.uid,
        server.sessionId,
        { mode: body.mode, proven },
        manager,
      );
      if (ended?.reason === 'takeover') {
        await this.sessions.recordTakeover(
          {
            uid: player.uid,
            fromSessionId: ended.live.sessionId,
            fromServerId: ended.live.serverId,
            toSessionId: session.sessionId,
            toServerId: server.serverId,
            proof: body.mode,
          },
          manager,
        );
      }
      const previousVersion = player.dataVersion;
      const changes: Partial<PlayerEntity> = { dataVersion: body.version };
      if (identified.username !== undefined && identified.username !== player.username)
        changes.username = identified.username;
      await this.players.update(player.uid, changes, manager);
      await this.players.moveHome(
        player.uid,
        server.serverId,
        await this.servers.homeGroup(server.serverId, manager),
        manager,
      );
      const resume = player.continueEnabled
        ? await this.credentials.issueResumeToken(player.uid, proven, manager)
        : null;
      const collections = await this.catalog.unlockedKeys(player.uid, manager);
      return {
        profile: toPlayerProfile({ ...player, ...changes }, previousVersion, session, resume, collections),
        ended,
      };
    });
    if ('conflict' in outcome) {
      await this.countConflict(server, body.mode, outcome.conflict);
      throw new SessionConflictError();
    }
    if (outcome.ended) await this.kickHolder(outcome.ended);
    return outcome.profile;
  }

  /**
   * A 409 because another server holds the player, counted for the admin server list: the
   * caller's ONLINE claim, and the holder's session without proof that kept the login out. A count
   * that fails is logged; the answer stays 409.
   */
  private async countConflict(server: ServerSessionContext, mode: PlayerLoginMode, holder: LivePlayerSession) {
    if (holder.serverSessionId === server.sessionId) return;
    await this.sessions
      .countConflict({
        onlineRefusedBy: mode === 'ONLINE' ? server.serverId : null,
        keptOutBy: holder.proven ? null : holder.serverId,
      })
      .catch((error: unknown) => this.logger.warn(`Counting a session conflict failed: ${String(error)}`));
  }

  /**
   * Tells the server that held the session to let the player go (after a handover or a takeover);
   * harmless if they already left. Sent to its sockets open now, never kept in the outbox: a kept
   * kick could reach that server after the player came back to it, and kick them there.
   */
  private async kickHolder(ended: EndedSession): Promise<void> {
    if (ended.reason === 'takeover') this.takeoverCounts[ended.proof] += 1;
    await this.events.publish({
      type: 'player.kicked',
      id: randomUUID(),
      keep: false,
      uid: ended.uid,
      serverSessionIds: [ended.live.serverSessionId],
      message: ended.reason === 'takeover' ? TAKEOVER_KICK_MESSAGE : HANDOVER_KICK_MESSAGE,
      reason: ended.reason,
      until: '',
    });
  }

  /** Takeovers this instance made since it started, by the login's proof (the metrics scrape reads them). */
  takeovers(): Readonly<Record<ProofMode, number>> {
    return this.takeoverCounts;
  }

  /**
   * `resume_session`: renews the player's session and binds it to this server session. A session
   * that another server holds moves here only when the two servers are one network (the
   * session-handover setting, decisions.md "Server switching"); otherwise nothing changes and the
   * answer is 401, as for a session this server cannot use.
   */
  async resumeSession(server: ServerSessionContext, token: string, uid: string): Promise<number> {
    const renewal = await this.sessions.renewPlayerSession(token, uid, server, null);
    if (renewal.renewed) return renewal.expiresIn;
    if (await this.servers.inOneNetwork(renewal.boundServerId, server.serverId)) {
      const moved = await this.sessions.renewPlayerSession(token, uid, server, renewal.boundServerId);
      if (moved.renewed) return moved.expiresIn;
    }
    throw new UnauthorizedError("The player session is bound to a server outside this server's network");
  }

  /** POST /player/logout: 401 for a dead token, 403 for a token of another server session. */
  async logout(server: ServerSessionContext, body: PlayerLogoutDto): Promise<void> {
    const session = await this.sessions.resolvePlayerToken(body.accessToken);
    if (session.uid !== body.uid) throw new UnauthorizedError('The access token does not belong to this uid');
    if (session.serverSessionId !== server.sessionId)
      throw new ForbiddenError('The player session belongs to another server session');
    await this.sessions.logoutPlayerSession(session, 'logout');
  }

  /**
   * What names the account, before the database: ONLINE the provider's profile (401 when it is
   * not a genuine account or the name does not match, 503 when the provider is down), TOKEN the
   * uid of the Net Token (within the server's budget of guesses; 401 for an unknown token), OFFLINE_REFRESH the
   * resume token's hash (the login's statement looks it up).
   */
  private async loginCredential(
    server: ServerSessionContext,
    body: PlayerLoginDto,
  ): Promise<{ uid?: string; uuid?: string; username?: string; resumeHash?: string }> {
    switch (body.mode) {
      case 'ONLINE': {
        const uuid = (body.uuid as string).toLowerCase();
        const profile = await this.identity.lookup(uuid);
        if (!profile || profile.id.replace(/-/g, '').toLowerCase() !== uuid.replace(/-/g, '')) {
          throw new UnauthorizedError('Not a genuine account');
        }
        // The same name up to ASCII case, by the rule the request's name met: a Unicode case fold
        // let a look-alike in (the Kelvin sign U+212A lowers to k) and stored it as the name.
        if (
          !USERNAME_PATTERN.test(profile.name) ||
          profile.name.toLowerCase() !== (body.username as string).toLowerCase()
        ) {
          throw new UnauthorizedError('The username does not match the account');
        }
        return { uuid, username: profile.name };
      }
      case 'TOKEN': {
        // Guessing is bounded per calling server session and per server, never per player named
        // (decisions.md "Rate limits"): no server's wrong tokens keep another server's players out.
        await this.netTokenGuesses.take(server.serverId, server.sessionId);
        let uid: string | null;
        try {
          uid = await this.credentials.findUidByNetToken(body.authToken as string);
        } catch (error) {
          await this.netTokenGuesses.giveBack(server.serverId, server.sessionId);
          throw error;
        }
        if (uid === null) throw new UnauthorizedError('Invalid Net Token');
        await this.netTokenGuesses.giveBack(server.serverId, server.sessionId);
        return { uid };
      }
      case 'OFFLINE_REFRESH':
        return { resumeHash: this.credentials.resumeTokenHash(body.resumeToken as string) };
    }
  }

  private async assertNotBanned(uid: string, manager: EntityManager): Promise<void> {
    const ban = await this.players.findActiveBan(uid, manager);
    if (ban) throw new BannedError(ban.reason, ban.until ? formatLocalDateTime(ban.until) : '');
  }
}
