/**
 * Events that domain modules publish and the realtime gateway delivers, on this instance or,
 * through Redis, on every instance. The bus knows no domain module: events are plain data.
 */
export interface ServerSessionEndedEvent {
  type: 'server_session.ended';
  serverId: number;
  sessionIds: string[];
  reason: 'replaced' | 'logout' | 'admin';
}

/**
 * A player must leave the game servers of these sessions: an administrator banned them
 * (decisions.md §7), or they joined another server of the same network (a handover).
 */
export interface PlayerKickedEvent {
  type: 'player.kicked';
  /** Unique per kick: every instance keeps the frame under it until a socket of the session takes it. */
  id: string;
  /**
   * Keep the frame for a socket that is reconnecting (a ban). A handover kick is sent only to the
   * sockets open now: kept, it could reach the server after the player came back to it.
   */
  keep: boolean;
  uid: string;
  /** Server sessions the player was bound to when the ban was issued. */
  serverSessionIds: string[];
  message: string;
  reason: string;
  /** ISO local date-time, '' for a permanent ban. */
  until: string;
}

/** A chat line from one game server, decorated for every game server of its network (decisions.md §7). */
export interface ChatEvent {
  type: 'chat';
  /** The serverIDs the line is for (the sender's handover group); null or absent: every server. */
  audience?: number[] | null;
  data: {
    uid: number;
    username: string;
    displayName: string;
    message: string;
    serverID: number;
    serverName: string;
    prefix: ChatTitle | null;
    suffix: ChatTitle | null;
  };
}

export interface ChatTitle {
  key: string;
  title: string;
  description: string | string[];
  rarity: string;
  position: boolean;
}

/** An admin write changed the listed catalog (collections or charts): drop cached copies. */
export interface CatalogChangedEvent {
  type: 'catalog.changed';
}

/** An admin write changed or revoked a public API key: drop the keys this instance holds. */
export interface PublicApiKeysChangedEvent {
  type: 'public_api_keys.changed';
}

/**
 * The first `top` places of these boards may have changed (uploads of the last fraction of a
 * second): game servers that asked for board updates read them again.
 */
export interface BoardsChangedEvent {
  type: 'boards.changed';
  /** The ATP board. */
  atp: boolean;
  /** The charts' boards. */
  levelIds: number[];
  top: number;
}

/**
 * Frames were kept in the realtime outbox for these game-server sessions inside a committed
 * transaction (keepPlayerFrames): instances holding a socket of one take them now. Lost, the
 * frames still go at the next ping round's catch-up (30 s) or at the session's next connect.
 */
export interface FramesKeptEvent {
  type: 'frames.kept';
  serverSessionIds: string[];
}

/**
 * Events may have been missed: this instance's subscription was down, or an instance published
 * while it could not reach the others (its events went to its own handlers only). Never replayed
 * by the bus; handlers that keep what must not be lost (the kick outbox) read it again. Delivered
 * locally when a subscription comes back, and through Redis by an instance that published alone
 * once it reaches Redis again.
 */
export interface EventsResumedEvent {
  type: 'events.resumed';
}

export type ServiceEvent =
  | ServerSessionEndedEvent
  | PlayerKickedEvent
  | ChatEvent
  | CatalogChangedEvent
  | PublicApiKeysChangedEvent
  | BoardsChangedEvent
  | FramesKeptEvent
  | EventsResumedEvent;

export type ServiceEventHandler = (event: ServiceEvent) => void;

export interface EventBus {
  /** Delivers the event to every subscriber of every instance (at most once each). */
  publish(event: ServiceEvent): Promise<void>;
  /** Returns the unsubscribe function. */
  subscribe(handler: ServiceEventHandler): () => void;
}

export const EVENT_BUS = Symbol('EVENT_BUS');
