import type { LoggerService } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Logger as NestPinoLogger, PinoLogger } from 'nestjs-pino';
import { pino, type DestinationStream, type Level, type Logger as Pino } from 'pino';
import type { LogLevel } from '../config/app-config';
import { clientIp } from '../common/http/client-ip';
import { pathOf } from '../common/http/route';
import { isPlainObject } from '../common/validation/json-object';
import { errorCodeOf } from '../common/filters/all-exceptions.filter';

/** Keys whose values are credentials (request bodies and headers use these names). */
const SECRET_KEYS = new Set([
  'authorization',
  'cookie',
  'accessToken',
  'authToken',
  'resumeToken',
  'netToken',
  'bootstrapToken',
  'serverAuthToken',
  'refreshToken',
  'token',
  'sig',
]);
const REDACTED = '[redacted]';

/**
 * Nothing logs bodies or headers, so no credential reaches a line; this is the second line of
 * defence against a future `logger.log({ body })`: values under a credential's key, at the top
 * level or one level down, are replaced. (pino's own `redact` option cost about 50 µs per line.)
 */
export function redactSecrets(object: Record<string, unknown>): Record<string, unknown> {
  let result = object;
  for (const key of Object.keys(object)) {
    const value = object[key];
    let replacement: unknown = value;
    if (SECRET_KEYS.has(key)) {
      replacement = REDACTED;
    } else if (isPlainObject(value)) {
      for (const inner of Object.keys(value)) {
        if (!SECRET_KEYS.has(inner)) continue;
        if (replacement === value) replacement = { ...value };
        (replacement as Record<string, unknown>)[inner] = REDACTED;
      }
    }
    if (replacement === value) continue;
    if (result === object) result = { ...object };
    result[key] = replacement;
  }
  return result;
}

/** Routes probed every few seconds by orchestrators and scrapers: their successes are debug lines. */
const QUIET_ROUTES = new Set(['/metrics', '/health', '/health/ready']);

/**
 * Errors as type, message, stack and code only. pino's standard serializer copies every enumerable
 * property, which for a TypeORM QueryFailedError includes the query parameters.
 */
function serializeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const code = (error as { code?: unknown }).code;
  return {
    type: error.name,
    message: error.message,
    stack: error.stack,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
  };
}

/**
 * Lines are gathered up to this many bytes (about 15 request lines) before a write to stdout; a
 * write per line was a hop to libuv's thread pool per request (docs/decisions.md "Observability").
 */
export const LOG_BATCH_BYTES = 4_096;
/** What is gathered is written at least this often, so a quiet service's lines are not held back. */
export const LOG_FLUSH_MS = 100;

/**
 * The app's root logger: JSON lines on stdout, or on `destination` (tests). Written asynchronously:
 * a synchronous write per line was a system call on the request path (docs/benchmarks-archive.md, "The
 * plugin's reads"), and in batches (LOG_BATCH_BYTES, at least every LOG_FLUSH_MS); pino flushes what
 * is buffered when the process exits.
 */
export function createRootLogger(level: LogLevel, destination?: DestinationStream): Pino {
  return pino(
    {
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }), log: redactSecrets },
      serializers: { err: serializeError },
    },
    destination ?? pino.destination({ dest: 1, sync: false, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS }),
  );
}

/**
 * nestjs-pino's PinoLogger on this app's root logger: its own fallback logger is one per process,
 * the first app's. No request context (AsyncLocalStorage): on Node 20 it cost about 28 µs of CPU
 * per request on /server/baltop (docs/decisions.md); lines about a request carry its `reqId`
 * explicitly instead.
 */
class AppPinoLogger extends PinoLogger {
  constructor(private readonly root: Pino) {
    super({ pinoHttp: { logger: root } });
  }

  override get logger(): Pino {
    return this.root;
  }
}

/** Nest's own start-up chatter (one line per route, module and gateway message): debug, not info. */
const NEST_BOOT_CONTEXTS = new Set(['RouterExplorer', 'RoutesResolver', 'InstanceLoader', 'WebSocketsController']);

class AppNestLogger extends NestPinoLogger {
  override log(message: unknown, ...optionalParams: unknown[]): void {
    const context = optionalParams[optionalParams.length - 1];
    if (typeof context === 'string' && NEST_BOOT_CONTEXTS.has(context)) super.debug(message, ...optionalParams);
    else super.log(message, ...optionalParams);
  }
}

/** The Nest LoggerService: every `new Logger('X')` call becomes a JSON line. */
export function createNestLogger(root: Pino): LoggerService {
  return new AppNestLogger(new AppPinoLogger(root), {});
}

function completionLevel(response: Response, route: string): Level {
  if (response.statusCode >= 500) return 'error';
  if (response.statusCode < 400 && QUIET_ROUTES.has(route)) return 'debug';
  return 'info';
}

/** The game server behind the request (its serverID), once authentication said which. */
function serverOf(request: Request): number | undefined {
  const auth = request.auth;
  if (auth?.kind === 'server') return auth.session.serverId;
  if (auth?.kind === 'bootstrap') return auth.serverId;
  return undefined;
}

/**
 * The one line per request: id, method, route pattern, path without its query string, status,
 * the error code answered (4xx/5xx), the game server (serverID) when the caller is one, the
 * public API key's id when the caller used one, and duration. Nothing else of the request (headers, body, query) is ever logged.
 */
export function logRequest(
  root: Pino,
  id: string,
  request: Request,
  response: Response,
  route: string,
  seconds: number,
): void {
  const level = completionLevel(response, route);
  if (!root.isLevelEnabled(level)) return;
  const line: Record<string, unknown> = {
    reqId: id,
    method: request.method,
    route,
    path: pathOf(request),
    client: clientIp(request),
    status: response.statusCode,
  };
  if (response.statusCode >= 400) line.error = errorCodeOf(response);
  const server = serverOf(request);
  if (server !== undefined) line.server = server;
  if (request.auth?.kind === 'api-key' && request.auth.keyId !== null) line.apiKey = request.auth.keyId;
  line.durationMs = Math.round(seconds * 100_000) / 100;
  root[level](line, response.writableFinished ? 'request completed' : 'request aborted');
}
