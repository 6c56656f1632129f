import type { LoggerService } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Logger as NestPinoLogger, PinoLogger } from 'nestjs-pino';
// nestjs-pino's request context; its module-level fallback logger is shared by every app of the process.
import { storage, Store } from 'nestjs-pino/storage';
import { pino, type DestinationStream, type Logger as Pino } from 'pino';
import { pinoHttp, type HttpLogger } from 'pino-http';
import type { LogLevel } from '../config/app-config';
import { REQUEST_ID_HEADER, requestIdFor } from './request-id';
import { pathOf, routeOf } from '../common/http/route';

/**
 * Keys whose values are credentials. Nothing logs bodies or headers, so they never reach a line;
 * redaction is the second line of defence against a future `logger.log({ body })`.
 */
const SECRET_KEYS = [
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
];

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

/** The process's root logger: JSON lines on stdout (synchronous), or on `destination` (tests). */
export function createRootLogger(level: LogLevel, destination?: DestinationStream): Pino {
  return pino(
    {
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: serializeError },
      redact: { paths: [...SECRET_KEYS, ...SECRET_KEYS.map((key) => `*.${key}`)], censor: '[redacted]' },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/** nestjs-pino's PinoLogger bound to this app's root logger outside a request (its default is process-wide). */
class AppPinoLogger extends PinoLogger {
  constructor(private readonly root: Pino) {
    super({ pinoHttp: { logger: root } });
  }

  override get logger(): Pino {
    return storage.getStore()?.logger ?? this.root;
  }
}

/** The Nest LoggerService: every `new Logger('X')` call becomes a JSON line (with `reqId` inside a request). */
export function createNestLogger(root: Pino): LoggerService {
  return new NestPinoLogger(new AppPinoLogger(root), {});
}

function requestFields(request: Request, response: Response, durationMs: number) {
  return { method: request.method, route: routeOf(request), path: pathOf(request), status: response.statusCode, durationMs };
}

/**
 * pino-http, configured to log one line per request (method, route pattern, path without query,
 * status, duration, request id) and nothing else of the request: no headers, no body, no query.
 * It also assigns the request id and answers it in `X-Request-Id`.
 */
export function createHttpLogger(root: Pino): HttpLogger<Request, Response> {
  return pinoHttp<Request, Response>({
    logger: root,
    genReqId: (request, response) => {
      const id = requestIdFor(request.headers[REQUEST_ID_HEADER.toLowerCase()]);
      response.setHeader(REQUEST_ID_HEADER, id);
      return id;
    },
    // Bind only `reqId` to the request's logger, not the whole request.
    quietReqLogger: true,
    quietResLogger: true,
    wrapSerializers: false,
    serializers: {
      req: (request: Request) => ({ method: request.method, path: pathOf(request) }),
      res: (response: Response) => ({ status: response.statusCode }),
      err: serializeError,
    },
    customLogLevel: (request, response, error) => {
      if (error || response.statusCode >= 500) return 'error';
      if (response.statusCode < 400 && QUIET_ROUTES.has(routeOf(request))) return 'debug';
      return 'info';
    },
    customSuccessObject: (request, response, value: { responseTime: number }) => requestFields(request, response, value.responseTime),
    // The cause of a 5xx is logged by the exception filter, with the same reqId.
    customErrorObject: (request, response, _error, value: { responseTime: number }) => requestFields(request, response, value.responseTime),
    customErrorMessage: () => 'request failed',
  });
}

/** Runs the rest of the request inside nestjs-pino's context, so Nest `Logger` calls carry its `reqId`. */
export function bindRequestLogger(request: Request, next: () => void): void {
  storage.run(new Store(request.log), next);
}
