import { INestApplicationContext, Logger } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import type { IncomingMessage } from 'node:http';
import { Observable, of } from 'rxjs';
import type { WebSocket, WebSocketServer } from 'ws';
import type { ServerSessionContext } from '../auth/auth.types';
import { mapError } from '../common/errors/error-body';
import { AppError, BadRequestError, PayloadTooLargeError } from '../common/errors/app-error';
import { MAX_BODY_BYTES } from '../common/http/body-parser';
import { jsonBodyError } from '../common/http/json-body-check';
import { ConnectionRegistry } from './connection-registry';
import { errorFrame } from './ws-exceptions.filter';
import { isJsonObject } from '../common/validation/json-object';

/**
 * A frame over this size is answered with a PAYLOAD_TOO_LARGE error frame, unread; chat and
 * resume frames are well under 2 KiB. Parsing is the one cost a frame has before any rule can
 * refuse it: 64 KiB of short keys held the event loop 4 to 12 ms (docs/decisions.md "Realtime").
 */
export const MAX_FRAME_BYTES = 16 * 1024;
/**
 * What ws buffers of one frame (the HTTP body limit): beyond it the socket is closed with 1009, as
 * there is no frame left to answer.
 */
export const MAX_BUFFERED_FRAME_BYTES = MAX_BODY_BYTES;

type VerifyClientCallback = (
  verified: boolean,
  code?: number,
  message?: string,
  headers?: Record<string, string>,
) => void;
type MessageHandler = { message: string; callback: (data: unknown, event: string) => unknown };
/** What rxjs's fromEvent hands over for a ws `message`: the socket's MessageEvent. */
type MessageEvent = { data: unknown; target?: WebSocket };

/**
 * Nest's ws adapter with the changes the contract needs (decisions.md §7):
 * - the upgrade is authenticated (server access token) and refused with HTTP 401 before any frame;
 * - a malformed frame or an unknown event is answered with an `error` frame instead of being dropped;
 * - a frame over MAX_FRAME_BYTES, or one that breaks the rules of every JSON body (nesting, NUL,
 *   lone surrogates, reserved keys: src/common/http/json-body-check.ts), is answered with an
 *   `error` frame before any handler reads it, and logged once per connection, without a stack.
 */
export class RealtimeWsAdapter extends WsAdapter {
  private readonly frameLogger = new Logger('Realtime');
  /** The server session of each socket, for the log line of a refused frame. */
  private readonly sessions = new WeakMap<WebSocket, ServerSessionContext | undefined>();
  /** The sockets whose refused frame has been logged already. */
  private readonly logged = new WeakSet<WebSocket>();

  constructor(private readonly app: INestApplicationContext) {
    super(app);
  }

  override bindClientConnect(server: WebSocketServer, callback: (...args: unknown[]) => void): void {
    server.on('connection', (socket: WebSocket, request: IncomingMessage & { rhythmcSession?: ServerSessionContext }) =>
      this.sessions.set(socket, request.rhythmcSession),
    );
    super.bindClientConnect(server, callback);
  }

  override create(port: number, options: Record<string, unknown> = {}): unknown {
    const connections = this.app.get(ConnectionRegistry, { strict: false });
    return super.create(port, {
      ...options,
      maxPayload: MAX_BUFFERED_FRAME_BYTES,
      // One message event per tick per socket: a socket that sends many frames in one TCP read
      // cannot hold the event loop while every other connection waits.
      allowSynchronousEvents: false,
      verifyClient: (info: { req: IncomingMessage }, done: VerifyClientCallback) => {
        connections.authenticateUpgrade(info.req).then(
          () => done(true),
          (error: unknown) => {
            const mapped = mapError(error);
            done(false, mapped.status, JSON.stringify(mapped.body), { 'Content-Type': 'application/json' });
          },
        );
      },
    });
  }

  override bindMessageHandler(
    buffer: MessageEvent,
    handlers: Map<string, MessageHandler>,
    transform: (data: unknown) => Observable<unknown>,
  ): Observable<unknown> {
    // Text frames arrive as a string, binary ones as a Buffer (read as UTF-8 JSON all the same).
    const bytes = Buffer.isBuffer(buffer.data) ? buffer.data.length : Buffer.byteLength(String(buffer.data));
    if (bytes > MAX_FRAME_BYTES)
      return of(this.refused(buffer.target, new PayloadTooLargeError(MAX_FRAME_BYTES, 'The frame')));
    const text = String(buffer.data);
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return of(malformed('Malformed frame: not JSON'));
    }
    const problem = jsonBodyError(frame, 'the frame');
    if (problem !== null) return of(this.refused(buffer.target, problem));
    if (!isJsonObject(frame)) return of(malformed('Malformed frame: expected {"event", "data"}'));
    const { event, data } = frame;
    if (typeof event !== 'string') return of(malformed('Malformed frame: event must be a string'));
    const handler = handlers.get(event);
    if (!handler) return of(malformed(`Unknown event "${event}"`));
    if (!isJsonObject(data)) return of(malformed(`Malformed frame: data of "${event}" must be an object`));
    try {
      return transform(handler.callback(data, event));
    } catch (error) {
      // Nest's handler wrapper catches what handlers throw (WsExceptionsFilter answers it); a throw
      // here is the wrapper's own: answered the same way rather than dropped.
      return of(errorFrame(error));
    }
  }

  /**
   * The error frame of a frame refused by a limit or by the JSON rules. The first one of a
   * connection is logged (a warning, no stack: nothing failed); later ones are only answered, so a
   * peer that keeps sending them cannot fill the log.
   */
  private refused(socket: WebSocket | undefined, error: AppError) {
    if (socket !== undefined && !this.logged.has(socket)) {
      this.logged.add(socket);
      const session = this.sessions.get(socket);
      const from = session === undefined ? 'a connection' : `server ${session.serverId} (session ${session.sessionId})`;
      this.frameLogger.warn(
        `Refused a WebSocket frame from ${from}: ${error.message.slice(0, 300)}; further refusals on this connection are not logged`,
      );
    }
    return errorFrame(error);
  }
}

function malformed(message: string) {
  return errorFrame(new BadRequestError(message));
}
