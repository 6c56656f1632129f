import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * Graceful stop of an HTTP(S) server: stop accepting connections, let the requests in flight
 * finish (their handlers, transactions included, run to the end), close keep-alive connections
 * as soon as they are idle, and after `timeoutMs` close whatever is still open. WebSocket
 * connections (upgraded) are not HTTP requests: the realtime service closes them with 1001.
 */
export class HttpDrain {
  private readonly inFlight = new Set<ServerResponse>();
  private draining = false;
  private settled: (() => void) | null = null;

  constructor(private readonly server: Server) {
    // Prepended: the header must be set before any handler can answer.
    server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
      this.inFlight.add(response);
      if (this.draining) response.setHeader('Connection', 'close');
      response.once('close', () => this.finished(response));
    });
  }

  /** Resolves when no request is in flight any more; answers how many were cut at the bound. */
  async drain(timeoutMs: number): Promise<{ cut: number }> {
    if (!this.draining) {
      this.draining = true;
      // Stops listening; Node also closes the connections that are idle right now.
      this.server.close();
      // Answers still to come end their connection instead of keeping it alive.
      for (const response of this.inFlight) if (!response.headersSent) response.setHeader('Connection', 'close');
    }
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => (this.settled = resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
      ]);
      clearTimeout(timer);
    }
    const cut = this.inFlight.size;
    if (cut > 0) this.server.closeAllConnections();
    else this.server.closeIdleConnections();
    return { cut };
  }

  private finished(response: ServerResponse): void {
    this.inFlight.delete(response);
    if (!this.draining) return;
    // A keep-alive connection whose answer went out before the stop is idle now: close it.
    setImmediate(() => this.server.closeIdleConnections());
    if (this.inFlight.size === 0) this.settled?.();
  }
}
