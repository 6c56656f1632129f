import { HttpException } from '@nestjs/common';
import { ThrottlerException } from '@nestjs/throttler';
import { AppError, ErrorCode } from './app-error';
import { DatabaseFailure, databaseFailureOf } from './database-errors';

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  [extra: string]: unknown;
}

export interface MappedError {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
  /** True when the cause is ours, not the caller's: log it, never show it. */
  internal: boolean;
}

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'SESSION_CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  426: 'UPGRADE_REQUIRED',
  429: 'RATE_LIMITED',
  430: 'BANNED',
  503: 'UNAVAILABLE',
};

/** Seconds a client should wait before sending a call again that the database could not take. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

const DATABASE_ANSWERS: Record<DatabaseFailure, { message: string; retryAfterSeconds: number }> = {
  unreachable: { message: 'The database cannot be reached', retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS },
  // Rolled back by PostgreSQL because of other transactions: sending it again at once may succeed.
  contention: {
    message: 'The database could not complete this call now; nothing was written',
    retryAfterSeconds: 1,
  },
  resource: {
    message: 'The database is out of resources (disk space, memory or connections)',
    retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
  },
  'read-only': { message: 'The database refuses writes (read-only)', retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS },
};

/** One mapping from any thrown value to the wire error (decisions.md §2), shared by HTTP and WebSocket. */
export function mapError(error: unknown): MappedError {
  if (error instanceof AppError) {
    return {
      status: error.status,
      body: { error: error.code, message: error.message, ...error.extra },
      headers: error.headers,
      internal: false,
    };
  }
  if (error instanceof ThrottlerException) {
    return { status: 429, body: { error: 'RATE_LIMITED', message: 'Too many requests' }, headers: {}, internal: false };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const code = CODE_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : 'BAD_REQUEST');
    if (status >= 500 && status !== 503) {
      return {
        status: 500,
        body: { error: 'INTERNAL_ERROR', message: 'Internal server error' },
        headers: {},
        internal: true,
      };
    }
    const message = httpExceptionMessage(error, status);
    return {
      status,
      // Every BAD_REQUEST body lists its problems by field (none known here).
      body: code === 'BAD_REQUEST' ? { error: code, message, errors: [] } : { error: code, message },
      headers: {},
      internal: false,
    };
  }
  // Not the request's fault: 503 with Retry-After (decisions.md §2), the cause logged.
  const failure = databaseFailureOf(error);
  if (failure !== null) {
    const { message, retryAfterSeconds } = DATABASE_ANSWERS[failure];
    return {
      status: 503,
      body: { error: 'UNAVAILABLE', message },
      headers: { 'Retry-After': String(retryAfterSeconds) },
      internal: true,
    };
  }
  return {
    status: 500,
    body: { error: 'INTERNAL_ERROR', message: 'Internal server error' },
    headers: {},
    internal: true,
  };
}

function httpExceptionMessage(error: HttpException, status: number): string {
  if (status === 404) return 'Not found';
  if (status === 503) return 'Service unavailable';
  const response = error.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return message.map(String).join('; ');
  if (typeof message === 'string') return message;
  return error.message;
}
