import { ArgumentsHost, Catch, Logger, WsExceptionFilter } from '@nestjs/common';
import { WebSocket } from 'ws';
import { mapError } from '../common/errors/error-body';

/** The error frame of a refused or failed WebSocket message: the HTTP error body, as `data`. */
export function errorFrame(error: unknown): { event: 'error'; data: Record<string, unknown> } {
  return { event: 'error', data: mapError(error).body };
}

/**
 * The WebSocket side of AllExceptionsFilter: whatever a message handler throws is answered on the
 * socket as an `error` frame with the same mapping as HTTP (decisions.md §2), 5xx causes logged
 * and never sent; the connection stays open. Nest's default WebSocket filter emits an
 * `exception` event on the socket object, which a `ws` socket never sends: the game server got
 * no answer at all.
 */
@Catch()
export class WsExceptionsFilter implements WsExceptionFilter {
  private readonly logger = new Logger('Realtime');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ws = host.switchToWs();
    const mapped = mapError(exception);
    if (mapped.internal) {
      this.logger.error(
        { err: exception, event: ws.getPattern() },
        `WebSocket message "${ws.getPattern()}" failed: ${exception instanceof Error ? exception.message : String(exception)}`,
      );
    }
    const socket = ws.getClient<WebSocket>();
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ event: 'error', data: mapped.body }));
  }
}
