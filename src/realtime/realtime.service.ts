import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { WebSocket } from 'ws';
import { UnauthorizedError } from '../common/errors/app-error';
import { mapError } from '../common/errors/error-body';
import { keptKickExpiry, kickFrame } from '../common/events/player-frames';
import { EVENT_BUS, EventBus, ServiceEvent } from '../common/events/events';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { PlayerLoginService } from '../player/player-login.service';
import { PlayerService } from '../player/player.service';
import { ServerService } from '../server/server.service';
import { ChatBudgets } from './chat-budget';
import {
  CLOSE_SESSION_ENDED,
  Connection,
  ConnectionRegistry,
  isOpen,
  PING_INTERVAL_MS,
  sessionEndedCloseReason,
  UpgradeRequest,
} from './connection-registry';
import { ChatData, Frame, OptInData, ResumeSessionData } from './dto/realtime.dto';
import { parseFrameData } from './parse-frame';
import { RealtimeRepository } from './realtime.repository';

/**
 * Kept frames that are not in the spec, sent only to a socket that asked for them (the spec does
 * not say the plugin ignores unknown events). A socket that has not asked leaves them kept: taken
 * when a socket of the session asks, or forgotten when they expire.
 */
const OPT_IN_EVENTS = ['collections_granted'];

/** The opt-in events this connection does not take. */
const unwantedBy = (connection: Connection): string[] => (connection.collectionUpdates ? [] : OPT_IN_EVENTS);

const wants = (connection: Connection, frame: Frame): boolean => !unwantedBy(connection).includes(frame.event);

/**
 * What travels over the game servers' sockets (the sockets themselves are ConnectionRegistry's):
 * the frames they send, parsed and answered; kicks, chat, board updates and session closes from
 * the event bus (which, with Redis, spans every instance); the outbox of kept frames, delivered to
 * a socket of the session when one is open and taken again every ping round.
 */
@Injectable()
export class RealtimeService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('Realtime');
  private unsubscribe: (() => void) | null = null;
  private outboxTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly registry: ConnectionRegistry,
    private readonly logins: PlayerLoginService,
    private readonly players: PlayerService,
    private readonly servers: ServerService,
    private readonly repository: RealtimeRepository,
    private readonly chatBudgets: ChatBudgets,
    @Inject(EVENT_BUS) private readonly events: EventBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.events.subscribe((event) => this.onEvent(event));
    this.outboxTimer = setInterval(() => this.outboxRound(), PING_INTERVAL_MS);
    this.outboxTimer.unref();
  }

  beforeApplicationShutdown(): void {
    this.unsubscribe?.();
    if (this.outboxTimer) clearInterval(this.outboxTimer);
  }

  /** A socket opened: registered, then given what the outbox kept for its session. */
  async connected(socket: WebSocket, request: UpgradeRequest): Promise<void> {
    const connection = await this.registry.register(socket, request);
    if (connection) await this.deliverKept(connection);
  }

  /** `resume_session` {uid, accessToken}: bind the player here and renew the token's TTL. */
  async resumeSession(socket: WebSocket, data: Record<string, unknown>): Promise<Frame> {
    const connection = this.registry.of(socket);
    const uidValue = typeof data.uid === 'number' || typeof data.uid === 'string' ? data.uid : null;
    try {
      if (!connection) throw new UnauthorizedError('Unknown connection');
      const { uid, accessToken } = await parseFrameData(ResumeSessionData, data);
      const expiresIn = await this.logins.resumeSession(connection.session, accessToken, uid);
      return { event: 'resume_session', data: { uid: Number(uid), ok: true, expiresIn } };
    } catch (error) {
      const { body } = this.mapped(error);
      return {
        event: 'resume_session',
        data: { uid: uidValue === null ? null : Number(uidValue), ok: false, ...body },
      };
    }
  }

  /**
   * `board_updates` {enabled}: turns `board_update` frames on or off for this socket. Opt-in, so a
   * plugin that does not know the frame never receives it (the spec does not say the plugin
   * ignores unknown events). Answered with the setting in force.
   */
  async boardUpdates(socket: WebSocket, data: Record<string, unknown>): Promise<Frame> {
    const connection = this.registry.of(socket);
    try {
      if (!connection) throw new UnauthorizedError('Unknown connection');
      const { enabled } = await parseFrameData(OptInData, data);
      connection.boardUpdates = enabled;
      return { event: 'board_updates', data: { enabled } };
    } catch (error) {
      return { event: 'error', data: this.mapped(error).body };
    }
  }

  /**
   * `collection_updates` {enabled}: turns `collections_granted` frames on or off for this socket
   * (opt-in, as `board_updates`). Turning them on sends what the outbox kept for the session meanwhile.
   */
  async collectionUpdates(socket: WebSocket, data: Record<string, unknown>): Promise<Frame> {
    const connection = this.registry.of(socket);
    try {
      if (!connection) throw new UnauthorizedError('Unknown connection');
      const { enabled } = await parseFrameData(OptInData, data);
      connection.collectionUpdates = enabled;
      if (enabled) setImmediate(() => void this.deliverKept(connection));
      return { event: 'collection_updates', data: { enabled } };
    } catch (error) {
      return { event: 'error', data: this.mapped(error).body };
    }
  }

  /** `chat` {uid, message}: decorated and delivered to every connected game server. Nothing is answered on success. */
  async chat(socket: WebSocket, data: Record<string, unknown>): Promise<Frame | undefined> {
    const connection = this.registry.of(socket);
    try {
      if (!connection) throw new UnauthorizedError('Unknown connection');
      // Before any lookup: a flood is refused for nothing and never fanned out. One budget for the
      // server session, however many sockets it has and on whichever instance.
      await this.chatBudgets.take(connection.session.sessionId);
      const { uid, message } = await parseFrameData(ChatData, data);
      // Each line waits for the one before it from this connection (the identity lookups of two
      // lines can finish in either order); lines of other connections do not wait.
      const delivery = connection.chatTail.then(() => this.deliverChat(connection, uid, message));
      connection.chatTail = delivery.catch(() => undefined);
      await delivery;
      return undefined;
    } catch (error) {
      return { event: 'error', data: this.mapped(error).body };
    }
  }

  private async deliverChat(connection: Connection, uid: string, message: string): Promise<void> {
    const sender = await this.players.chatIdentity(uid, connection.session.sessionId);
    await this.events.publish({
      type: 'chat',
      // The sender's network (decisions.md "Server switching"): with handover groups, a line stays in its group.
      audience: await this.servers.chatAudience(connection.session.serverId),
      data: {
        uid: sender.uid,
        username: sender.username,
        displayName: sender.displayName,
        message,
        serverID: connection.session.serverId,
        serverName: connection.serverName,
        prefix: sender.prefix,
        suffix: sender.suffix,
      },
    });
  }

  private onEvent(event: ServiceEvent): void {
    switch (event.type) {
      case 'server_session.ended':
        for (const connection of this.registry.ofSessions(event.sessionIds)) {
          this.registry.close(connection, CLOSE_SESSION_ENDED, sessionEndedCloseReason(event.reason));
        }
        return;
      case 'player.kicked': {
        const frame = kickFrame(event);
        if (event.keep) void this.deliverAddressed(event.id, event.serverSessionIds, frame);
        else for (const connection of this.registry.ofSessions(event.serverSessionIds)) this.send(connection, frame);
        return;
      }
      case 'chat': {
        const frame = { event: 'chat', data: event.data };
        for (const connection of this.registry.ofServers(event.audience ?? null)) this.send(connection, frame);
        return;
      }
      case 'boards.changed': {
        const frame = { event: 'board_update', data: { atp: event.atp, levelIds: event.levelIds, top: event.top } };
        for (const connection of this.registry.all()) if (connection.boardUpdates) this.send(connection, frame);
        return;
      }
      case 'frames.kept':
        void this.catchUp(undefined, event.serverSessionIds);
        return;
      case 'events.resumed':
        void this.catchUp('events may have been missed while Redis was unreachable');
        return;
    }
  }

  /**
   * A frame for the sockets of some server sessions that must not be lost while a socket
   * reconnects (after 4001, or to another instance): kept in the outbox first, then taken by
   * whichever socket of the session is open here; a socket that connects later takes it then.
   */
  private async deliverAddressed(eventId: string, sessionIds: string[], frame: Frame): Promise<void> {
    const expiresAt = keptKickExpiry(this.config);
    try {
      await this.repository.keepForSessions(eventId, sessionIds, frame, expiresAt);
    } catch (error) {
      // Without the database the frame cannot be kept: the sockets open here still get it.
      this.logger.warn(`Keeping a ${frame.event} frame failed; delivering it only to open sockets: ${String(error)}`);
      for (const connection of this.registry.ofSessions(sessionIds))
        if (wants(connection, frame)) this.send(connection, frame);
      return;
    }
    await Promise.all(
      this.registry.ofSessions(sessionIds).map((connection) => this.sendKept(connection, eventId, frame)),
    );
  }

  /** Sends what the outbox kept for this connection's session (it has just connected). */
  private async deliverKept(connection: Connection): Promise<void> {
    try {
      const kept = await this.repository.takePending([connection.session.sessionId], unwantedBy(connection));
      for (const { eventId, frame } of kept) this.sendTaken(connection, eventId, frame);
    } catch (error) {
      this.logger.warn(`Delivering kept frames failed: ${String(error)}`);
    }
  }

  /**
   * Sends what the outbox still keeps for the sessions of the sockets open here: frames whose
   * event this instance never heard (published while Redis was unreachable, from an instance that
   * could only keep them) or whose send failed. After `events.resumed`, and every ping round in
   * case even that was lost (the publishing instance died before Redis came back). A row is taken
   * once, so a frame another instance sends is not sent here again. `frames.kept` (frames written
   * inside another module's transaction, keepPlayerFrames) takes those of its sessions at once.
   */
  private async catchUp(why?: string, onlySessions?: string[]): Promise<void> {
    const only = onlySessions ? new Set(onlySessions) : null;
    const bySession = new Map<string, Connection>();
    for (const connection of this.registry.all())
      if (isOpen(connection) && (!only || only.has(connection.session.sessionId))) {
        // A socket of the session that takes the opt-in frames is preferred.
        const chosen = bySession.get(connection.session.sessionId);
        if (!chosen || unwantedBy(chosen).length > unwantedBy(connection).length)
          bySession.set(connection.session.sessionId, connection);
      }
    if (bySession.size === 0) return;
    try {
      const sessions = [...bySession.values()];
      const kept = [
        ...(await this.repository.takePending(
          sessions.filter((c) => unwantedBy(c).length === 0).map((c) => c.session.sessionId),
        )),
        ...(await this.repository.takePending(
          sessions.filter((c) => unwantedBy(c).length > 0).map((c) => c.session.sessionId),
          OPT_IN_EVENTS,
        )),
      ];
      for (const { sessionId, eventId, frame } of kept)
        this.sendTaken(bySession.get(sessionId) as Connection, eventId, frame);
      if (kept.length > 0)
        this.logger.log(
          `Delivered ${kept.length} kept frame(s) that had not reached their socket${why ? ` (${why})` : ''}`,
        );
    } catch (error) {
      this.logger.warn(`Delivering kept frames failed: ${String(error)}`);
    }
  }

  private async sendKept(connection: Connection, eventId: string, frame: Frame): Promise<void> {
    if (!isOpen(connection) || !wants(connection, frame)) return;
    try {
      if (await this.repository.take(eventId, connection.session.sessionId)) this.sendTaken(connection, eventId, frame);
    } catch (error) {
      this.logger.warn(`Delivering a kept ${frame.event} frame failed: ${String(error)}`);
    }
  }

  /** Sends a frame taken from the outbox; if the socket closed meanwhile, gives it back for the next socket. */
  private sendTaken(connection: Connection, eventId: string, frame: Frame): void {
    const giveBack = () => void this.repository.giveBack(eventId, connection.session.sessionId).catch(() => undefined);
    if (!isOpen(connection)) return giveBack();
    connection.socket.send(JSON.stringify(frame), (error) => {
      if (error) giveBack();
    });
  }

  private send(connection: Connection, frame: Frame): void {
    if (connection.socket.readyState === connection.socket.OPEN) connection.socket.send(JSON.stringify(frame));
  }

  /** With the ping round: expired outbox rows go, and frames that never reached their socket are taken again. */
  private outboxRound(): void {
    void this.repository
      .sweepOutbox()
      .catch((error: unknown) => this.logger.warn(`Outbox sweep failed: ${String(error)}`));
    void this.catchUp();
  }

  private mapped(error: unknown) {
    const mapped = mapError(error);
    if (mapped.internal)
      this.logger.error(
        `WebSocket frame failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    return mapped;
  }
}
