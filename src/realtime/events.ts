/**
 * Events that domain modules publish and the realtime gateway delivers. The bus knows no
 * domain module: events are plain data.
 */
export interface ServerSessionEndedEvent {
  type: 'server_session.ended';
  serverId: number;
  sessionIds: string[];
  reason: 'replaced' | 'logout';
}

export type ServiceEvent = ServerSessionEndedEvent;

export type ServiceEventHandler = (event: ServiceEvent) => void;

export interface EventBus {
  /** Delivers the event to every subscriber of every instance (at most once each). */
  publish(event: ServiceEvent): Promise<void>;
  /** Returns the unsubscribe function. */
  subscribe(handler: ServiceEventHandler): () => void;
}

export const EVENT_BUS = Symbol('EVENT_BUS');
