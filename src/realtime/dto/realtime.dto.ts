/** A WebSocket frame (decisions.md §7): JSON text `{"event": string, "data": object}`. */
export interface Frame<T = Record<string, unknown>> {
  event: string;
  data: T;
}

export class OpenConnectionResponse {
  connectionId!: string;
  serverID!: number;
  instanceId!: string;
  remoteAddress!: string | null;
  connectedAt!: string;
}
