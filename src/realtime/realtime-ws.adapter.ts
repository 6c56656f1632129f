import { INestApplicationContext } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import type { IncomingMessage } from 'node:http';
import { Observable, of } from 'rxjs';
import { mapError } from '../common/errors/error-body';
import { BadRequestError } from '../common/errors/app-error';
import { RealtimeService } from './realtime.service';
import { errorFrame } from './ws-exceptions.filter';
import { isJsonObject } from '../common/validation/json-object';

/** Frames above this size close the socket (1009); chat and resume frames are tiny. */
const MAX_FRAME_BYTES = 64 * 1024;

type VerifyClientCallback = (
  verified: boolean,
  code?: number,
  message?: string,
  headers?: Record<string, string>,
) => void;
type MessageHandler = { message: string; callback: (data: unknown, event: string) => unknown };

/**
 * Nest's ws adapter with two changes the contract needs (decisions.md §7):
 * - the upgrade is authenticated (server access token) and refused with HTTP 401 before any frame;
 * - a malformed frame or an unknown event is answered with an `error` frame instead of being dropped.
 */
export class RealtimeWsAdapter extends WsAdapter {
  constructor(private readonly app: INestApplicationContext) {
    super(app);
  }

  override create(port: number, options: Record<string, unknown> = {}): unknown {
    const realtime = this.app.get(RealtimeService, { strict: false });
    return super.create(port, {
      ...options,
      maxPayload: MAX_FRAME_BYTES,
      // One message event per tick per socket: a socket that sends many frames in one TCP read
      // cannot hold the event loop while every other connection waits.
      allowSynchronousEvents: false,
      verifyClient: (info: { req: IncomingMessage }, done: VerifyClientCallback) => {
        realtime.authenticateUpgrade(info.req).then(
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
    buffer: { data: unknown },
    handlers: Map<string, MessageHandler>,
    transform: (data: unknown) => Observable<unknown>,
  ): Observable<unknown> {
    let frame: unknown;
    try {
      frame = JSON.parse(String(buffer.data));
    } catch {
      return of(malformed('Malformed frame: not JSON'));
    }
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
}

function malformed(message: string) {
  return errorFrame(new BadRequestError(message));
}
