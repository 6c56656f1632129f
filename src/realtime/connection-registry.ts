import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import { bearerToken } from '../auth/auth.guard';
import { ServerSessionService } from '../auth/server-session.service';
import type { ServerSessionContext } from '../auth/auth.types';
import type { ServerSessionEndReason } from '../auth/entities/server-session.entity';
import { UnauthorizedError } from '../common/errors/app-error';
import { clientAddressOf, compileTrustProxy, TrustFunction } from '../common/http/client-ip';
import { formatLocalDateTime } from '../common/time';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ServerService } from '../server/server.service';
import { OpenConnectionResponse } from './dto/realtime.dto';
import { RealtimeRepository } from './realtime.repository';

/** Close codes (decisions.md §3). */
export const CLOSE_TOKEN_EXPIRING = 4001;
export const CLOSE_SESSION_ENDED = 4002;
/** The server session opened more sockets than WS_CONNECTIONS_PER_SERVER_SESSION: its oldest is closed. */
export const CLOSE_TOO_MANY_CONNECTIONS = 4003;
export const CLOSE_GOING_AWAY = 1001;

/** The socket is closed this long before its token expires, so the plugin refreshes in time. */
const EXPIRY_MARGIN_MS = 30_000;
/** The ping round: a socket that did not answer the previous ping is cut. */
export const PING_INTERVAL_MS = 30_000;
/** How long a stopping service waits for the peers to answer its 1001 close frames. */
const SHUTDOWN_CLOSE_WAIT_MS = 2_000;
/** A socket closed for being over the cap that does not answer the close frame is cut after this. */
const EVICTED_CLOSE_WAIT_MS = 2_000;

/** The reason of a 4002 close, from why the server session ended (null: the session's row is gone). */
export function sessionEndedCloseReason(reason: ServerSessionEndReason | null): string {
  switch (reason) {
    case 'logout':
      return 'Server logged out';
    case 'admin':
      return 'Server logged out by an admin';
    case 'replaced':
      return 'Session replaced by a new login';
    case null:
      return 'Server session ended';
  }
}

/** An open socket of a game server on this instance, and what it asked for. */
export interface Connection {
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

export type UpgradeRequest = IncomingMessage & { rhythmcSession?: ServerSessionContext };

export const isOpen = (connection: Connection): boolean => connection.socket.readyState === connection.socket.OPEN;

/**
 * Which game-server sockets are open on this instance: the upgrade's authentication, the
 * connection records (rows of every instance for the admin list, this instance's heartbeat), the
 * per-server-session cap, token expiry, the ping round, lookups by socket, server session and
 * server (a handover group's chat audience), and the closes. What travels over the sockets is
 * RealtimeService's.
 */
@Injectable()
export class ConnectionRegistry implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('Realtime');
  private readonly instanceId = randomUUID();
  private readonly connections = new Map<WebSocket, Connection>();
  /** The open sockets of each server session on this instance, oldest first (at most WS_CONNECTIONS_PER_SERVER_SESSION). */
  private readonly sessionSockets = new Map<string, Connection[]>();
  private pingTimer: NodeJS.Timeout | null = null;
  /** The ping round's check of ended sessions is running (a slow database does not stack them). */
  private checkingSessions = false;
  /** TRUST_PROXY, for the address recorded with each connection. */
  private readonly trustProxy: TrustFunction;

  constructor(
    private readonly serverSessions: ServerSessionService,
    private readonly servers: ServerService,
    private readonly repository: RealtimeRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.trustProxy = compileTrustProxy(config.trustProxy);
  }

  onModuleInit(): void {
    this.pingTimer = setInterval(() => this.pingAll(), PING_INTERVAL_MS);
    this.pingTimer.unref();
  }

  /**
   * Closes every socket with 1001 (going away) when the service stops, and waits briefly for the
   * closing handshakes. It runs before Nest disposes of the ws server, which terminates whatever
   * is still open without a close frame (the peer would only see 1006).
   */
  async beforeApplicationShutdown(): Promise<void> {
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

  /**
   * Takes a socket the upgrade authenticated: its expiry timer, the cap, its connection record
   * (written before this resolves), its server's name. Null when the upgrade left no session (the
   * socket is closed with 1008).
   */
  async register(socket: WebSocket, request: UpgradeRequest): Promise<Connection | null> {
    const session = request.rhythmcSession;
    if (!session) {
      socket.close(1008, 'Unauthenticated');
      return null;
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
    return connection;
  }

  unregister(socket: WebSocket): void {
    const connection = this.connections.get(socket);
    if (!connection) return;
    clearTimeout(connection.expiryTimer);
    this.connections.delete(socket);
    this.forgetSessionSocket(connection);
  }

  /** The connection of a socket, while it is registered. */
  of(socket: WebSocket): Connection | undefined {
    return this.connections.get(socket);
  }

  /** Every connection of this instance. */
  all(): IterableIterator<Connection> {
    return this.connections.values();
  }

  /** The connections of these server sessions. */
  ofSessions(sessionIds: string[]): Connection[] {
    const wanted = new Set(sessionIds);
    return [...this.connections.values()].filter((connection) => wanted.has(connection.session.sessionId));
  }

  /** The connections of these servers (a chat line's handover group), or of every server when null. */
  ofServers(serverIds: number[] | null): Connection[] {
    const wanted = serverIds ? new Set(serverIds) : null;
    return [...this.connections.values()].filter((connection) => !wanted || wanted.has(connection.session.serverId));
  }

  close(connection: Connection, code: number, reason: string): void {
    clearTimeout(connection.expiryTimer);
    if (
      connection.socket.readyState === connection.socket.OPEN ||
      connection.socket.readyState === connection.socket.CONNECTING
    ) {
      connection.socket.close(code, reason);
    }
  }

  /** The connection records of every instance (GET /admin/realtime/connections). */
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

  /** The ping round: cuts a socket that did not answer the last ping, pings the rest, and beats this instance's heartbeat. */
  private pingAll(): void {
    for (const connection of this.connections.values()) {
      if (!connection.alive) {
        connection.socket.terminate();
        continue;
      }
      connection.alive = false;
      connection.socket.ping();
    }
    if (this.connections.size > 0) {
      void this.repository
        .touchInstance(this.instanceId)
        .catch((error: unknown) => this.logger.warn(`Heartbeat failed: ${String(error)}`));
      void this.closeEndedSessions();
    }
  }

  /**
   * Closes (4002) the sockets whose server session is over. The `server_session.ended` event closes
   * them at once; this round catches the ones it missed: an event heard before the socket was
   * registered (the upgrade authenticated a token whose session ended meanwhile), or published while
   * Redis was unreachable. Without it such a socket would keep receiving chat and board updates until
   * its token ran out (up to SERVER_TOKEN_TTL_SECONDS). One query a round for every open session.
   */
  async closeEndedSessions(): Promise<void> {
    if (this.checkingSessions || this.sessionSockets.size === 0) return;
    this.checkingSessions = true;
    try {
      const ended = await this.serverSessions.endedAmong([...this.sessionSockets.keys()]);
      for (const { id, reason } of ended)
        for (const connection of [...(this.sessionSockets.get(id) ?? [])])
          this.close(connection, CLOSE_SESSION_ENDED, sessionEndedCloseReason(reason));
    } catch (error) {
      this.logger.warn(`Checking the open sockets' server sessions failed: ${String(error)}`);
    } finally {
      this.checkingSessions = false;
    }
  }
}
