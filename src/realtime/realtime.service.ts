import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import { bearerToken } from '../auth/auth.guard';
import { ServerSessionService } from '../auth/server-session.service';
import type { ServerSessionContext } from '../auth/auth.types';
import { UnauthorizedError } from '../common/errors/app-error';
import { mapError } from '../common/errors/error-body';
import { EVENT_BUS, EventBus, ServiceEvent } from '../common/events/events';
import { clientAddressOf, compileTrustProxy, TrustFunction } from '../common/http/client-ip';
import { formatLocalDateTime } from '../common/time';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { PlayerLoginService } from '../player/player-login.service';
import { PlayerService } from '../player/player.service';
import { ServerService } from '../server/server.service';
import { ChatBudgets } from './chat-budget';
import { ChatData, Frame, OpenConnectionResponse, OptInData, ResumeSessionData } from './dto/realtime.dto';
import { parseFrameData } from './parse-frame';
import { RealtimeRepository } from './realtime.repository';

/** Close codes (decisions.md §3). */
export const CLOSE_TOKEN_EXPIRING = 4001;
export const CLOSE_SESSION_ENDED = 4002;
/** The server session opened more sockets than WS_CONNECTIONS_PER_SERVER_SESSION: its oldest is closed. */
export const CLOSE_TOO_MANY_CONNECTIONS = 4003;
export const CLOSE_GOING_AWAY = 1001;

/** The socket is closed this long before its token expires, so the plugin refreshes in time. */
const EXPIRY_MARGIN_MS = 30_000;
const PING_INTERVAL_MS = 30_000;
/** How long a stopping service waits for the peers to answer its 1001 close frames. */
const SHUTDOWN_CLOSE_WAIT_MS = 2_000;
/** A socket closed for being over the cap that does not answer the close frame is cut after this. */
const EVICTED_CLOSE_WAIT_MS = 2_000;

interface Connection {
  id: string;
  socket: WebSocket;
  session: ServerSessionContext;
  serverName: string;
  alive: boolean;
  expiryTimer: NodeJS.Timeout;
  /** The last chat line of this connection still being delivered: lines are published in the order they came. */
  chatTail: Promise<void>;
  /** The socket asked for `board_update` frames (`board_updates` {enabled: true}); off by default. */
  boardUpdates: boolean;
  /** The socket asked for `collections_granted` frames (`collection_updates` {enabled: true}); off by default. */
  collectionUpdates: boolean;
}

/**
 * Kept frames that are not in the spec, sent only to a socket that asked for them (the spec does
 * not say the plugin ignores unknown events). A socket that has not asked leaves them kept: taken
 * when a socket of the session asks, or forgotten when they expire.
 */
const OPT_IN_EVENTS = ['collections_granted'];

/** The opt-in events this connection does not take. */
const unwantedBy = (connection: Connection): string[] => (connection.collectionUpdates ? [] : OPT_IN_EVENTS);

const wants = (connection: Connection, frame: Frame): boolean => !unwantedBy(connection).includes(frame.event);

type UpgradeRequest = IncomingMessage & { rhythmcSession?: ServerSessionContext };

const isOpen = (connection: Connection): boolean => connection.socket.readyState === connection.socket.OPEN;

/**
 * The game servers connected to this instance, and what reaches them: acks of their frames,
 * kicks, chat and session closes from the event bus (which, with Redis, spans every instance).
 */
@Injectable()
export class RealtimeService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('Realtime');
  private readonly instanceId = randomUUID();
  private readonly connections = new Map<WebSocket, Connection>();
  /** The open sockets of each server session on this instance, oldest first (at most WS_CONNECTIONS_PER_SERVER_SESSION). */
  private readonly sessionSockets = new Map<string, Connection[]>();
  private unsubscribe: (() => void) | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  /** TRUST_PROXY, for the address recorded with each connection. */
  private readonly trustProxy: TrustFunction;

  constructor(
    private readonly serverSessions: ServerSessionService,
    private readonly logins: PlayerLoginService,
    private readonly players: PlayerService,
    private readonly servers: ServerService,
    private readonly repository: RealtimeRepository,
    private readonly chatBudgets: ChatBudgets,
    @Inject(EVENT_BUS) private readonly events: EventBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.trustProxy = compileTrustProxy(config.trustProxy);
  }

  onModuleInit(): void {
    this.unsubscribe = this.events.subscribe((event) => this.onEvent(event));
    this.pingTimer = setInterval(() => this.pingAll(), PING_INTERVAL_MS);
    this.pingTimer.unref();
  }

  /**
   * Closes every socket with 1001 (going away) when the service stops, and waits briefly for the
   * closing handshakes. It runs before Nest disposes of the ws server, which terminates whatever
   * is still open without a close frame (the peer would only see 1006).
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.unsubscribe?.();
    if (this.pingTimer) clearInterval(this.pingTimer);
    const sockets = [...this.connections.values()].map((connection) => connection.socket);
    const closed = sockets.map(
      (socket) =>
        new Promise<void>((resolve) =>
          socket.readyState === socket.CLOSED ? resolve() : socket.once('close', () => resolve()),
        ),
    );
    for (const connection of this.connections.values())
      this.close(connection, CLOSE_GOING_AWAY, 'Service shutting down');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(closed),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_CLOSE_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }

  /** Open WebSocket connections of this instance (for the metrics scrape). */
  get connectionCount(): number {
    return this.connections.size;
  }

  /** Upgrade check: a live server access token in the Authorization header; throws (→ HTTP 401) otherwise. */
  async authenticateUpgrade(request: UpgradeRequest): Promise<void> {
    const token = bearerToken(request.headers.authorization);
    if (token === null) throw new UnauthorizedError('Missing bearer server access token');
    request.rhythmcSession = await this.serverSessions.resolveServerToken(token);
  }

  async register(socket: WebSocket, request: UpgradeRequest): Promise<void> {
    const session = request.rhythmcSession;
    if (!session) {
      socket.close(1008, 'Unauthenticated');
      return;
    }
    const delay = Math.max(0, session.tokenExpiresAt.getTime() - EXPIRY_MARGIN_MS - Date.now());
    const connection: Connection = {
      id: randomUUID(),
      socket,
      session,
      serverName: '',
      alive: true,
      chatTail: Promise.resolve(),
      boardUpdates: false,
      collectionUpdates: false,
      expiryTimer: setTimeout(
        () => this.close(connection, CLOSE_TOKEN_EXPIRING, 'Token expiring; refresh and reconnect'),
        delay,
      ),
    };
    this.connections.set(socket, connection);
    this.capSessionSockets(connection);
    socket.on('pong', () => {
      connection.alive = true;
    });
    // The open row first: a socket closed at once (over the cap) must not leave an open row behind.
    const recorded = this.repository
      .recordOpen({
        id: connection.id,
        instanceId: this.instanceId,
        serverId: session.serverId,
        serverSessionId: session.sessionId,
        remoteAddress: clientAddressOf(request, this.trustProxy),
        connectedAt: new Date(),
      })
      .catch((error: unknown) => this.logger.warn(`Recording a connection failed: ${String(error)}`));
    socket.once('close', (code: number) => {
      void recorded.then(() => this.repository.recordClose(connection.id, code)).catch(() => undefined);
    });
    connection.serverName = await this.servers.serverName(session.serverId);
    await recorded;
    await this.deliverKept(connection);
  }

  unregister(socket: WebSocket): void {
    const connection = this.connections.get(socket);
    if (!connection) return;
    clearTimeout(connection.expiryTimer);
    this.connections.delete(socket);
    this.forgetSessionSocket(connection);
  }

  /**
   * At most WS_CONNECTIONS_PER_SERVER_SESSION sockets per server session on this instance (decisions.md
   * "Realtime"): a new one over the cap closes the session's oldest with 4003. The newest is the
   * plugin's current one (a reconnect whose old socket the service has not seen die yet), so a
   * reconnecting plugin always gets in; a server that opens sockets in a loop only closes its own.
   * Synchronous, so connections registering at once count each other.
   */
  private capSessionSockets(connection: Connection): void {
    const sockets = this.sessionSockets.get(connection.session.sessionId) ?? [];
    sockets.push(connection);
    this.sessionSockets.set(connection.session.sessionId, sockets);
    while (sockets.length > this.config.wsConnectionsPerServerSession) {
      const oldest = sockets.shift() as Connection;
      this.close(
        oldest,
        CLOSE_TOO_MANY_CONNECTIONS,
        'Too many connections for this server session; the newest is kept',
      );
      setTimeout(() => oldest.socket.terminate(), EVICTED_CLOSE_WAIT_MS).unref();
    }
  }

  private forgetSessionSocket(connection: Connection): void {
    const sockets = this.sessionSockets.get(connection.session.sessionId);
    if (!sockets) return;
    const index = sockets.indexOf(connection);
    if (index >= 0) sockets.splice(index, 1);
    if (sockets.length === 0) this.sessionSockets.delete(connection.session.sessionId);
  }

  /** `resume_session` {uid, accessToken}: bind the player here and renew the token's TTL. */
  async resumeSession(socket: WebSocket, data: Record<string, unknown>): Promise<Frame> {
    const connection = this.connections.get(socket);
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
    const connection = this.connections.get(socket);
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
    const connection = this.connections.get(socket);
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
    const connection = this.connections.get(socket);
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

  async listConnections(): Promise<OpenConnectionResponse[]> {
    const rows = await this.repository.listOpen();
    return rows.map((row) => ({
      connectionId: row.id,
      serverID: row.serverId,
      instanceId: row.instanceId,
      remoteAddress: row.remoteAddress,
      connectedAt: formatLocalDateTime(row.connectedAt),
    }));
  }

  private onEvent(event: ServiceEvent): void {
    switch (event.type) {
      case 'server_session.ended':
        for (const connection of this.connectionsOf(event.sessionIds)) {
          this.close(
            connection,
            CLOSE_SESSION_ENDED,
            event.reason === 'logout'
              ? 'Server logged out'
              : event.reason === 'admin'
                ? 'Server logged out by an admin'
                : 'Session replaced by a new login',
          );
        }
        return;
      case 'player.kicked': {
        const frame = {
          event: 'kick_player',
          data: { uid: Number(event.uid), message: event.message, reason: event.reason, until: event.until },
        };
        if (event.keep) void this.deliverAddressed(event.id, event.serverSessionIds, frame);
        else for (const connection of this.connectionsOf(event.serverSessionIds)) this.send(connection, frame);
        return;
      }
      case 'chat': {
        const frame = { event: 'chat', data: event.data };
        const audience = event.audience ? new Set(event.audience) : null;
        for (const connection of this.connections.values())
          if (!audience || audience.has(connection.session.serverId)) this.send(connection, frame);
        return;
      }
      case 'boards.changed': {
        const frame = { event: 'board_update', data: { atp: event.atp, levelIds: event.levelIds, top: event.top } };
        for (const connection of this.connections.values()) if (connection.boardUpdates) this.send(connection, frame);
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
    const expiresAt = new Date(
      Date.now() + (this.config.serverTokenTtlSeconds + this.config.serverTokenRefreshGraceSeconds) * 1000,
    );
    try {
      await this.repository.keepForSessions(eventId, sessionIds, frame, expiresAt);
    } catch (error) {
      // Without the database the frame cannot be kept: the sockets open here still get it.
      this.logger.warn(`Keeping a ${frame.event} frame failed; delivering it only to open sockets: ${String(error)}`);
      for (const connection of this.connectionsOf(sessionIds))
        if (wants(connection, frame)) this.send(connection, frame);
      return;
    }
    await Promise.all(this.connectionsOf(sessionIds).map((connection) => this.sendKept(connection, eventId, frame)));
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
    for (const connection of this.connections.values())
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

  private connectionsOf(sessionIds: string[]): Connection[] {
    const wanted = new Set(sessionIds);
    return [...this.connections.values()].filter((connection) => wanted.has(connection.session.sessionId));
  }

  private send(connection: Connection, frame: Frame): void {
    if (connection.socket.readyState === connection.socket.OPEN) connection.socket.send(JSON.stringify(frame));
  }

  private close(connection: Connection, code: number, reason: string): void {
    clearTimeout(connection.expiryTimer);
    if (
      connection.socket.readyState === connection.socket.OPEN ||
      connection.socket.readyState === connection.socket.CONNECTING
    ) {
      connection.socket.close(code, reason);
    }
  }

  private pingAll(): void {
    for (const connection of this.connections.values()) {
      if (!connection.alive) {
        connection.socket.terminate();
        continue;
      }
      connection.alive = false;
      connection.socket.ping();
    }
    void this.repository
      .sweepOutbox()
      .catch((error: unknown) => this.logger.warn(`Outbox sweep failed: ${String(error)}`));
    void this.catchUp();
    if (this.connections.size > 0) {
      void this.repository
        .touchInstance(this.instanceId)
        .catch((error: unknown) => this.logger.warn(`Heartbeat failed: ${String(error)}`));
    }
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
