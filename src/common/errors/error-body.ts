import { HttpException } from '@nestjs/common';
import { ThrottlerException } from '@nestjs/throttler';
import { QueryFailedError } from 'typeorm';
import { AppError, ErrorCode } from './app-error';

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

/**
 * Connection-level failures of PostgreSQL/pg: the database is unreachable, not the request wrong.
 * Socket errnos, SQLSTATE class 08 (connection exception), 57P01-57P03 (shutdown, crash, starting
 * up) and 53300 (too many connections).
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

/**
 * The database refused this call because of other transactions, and rolled it back: nothing was
 * written, and the same call can succeed a moment later. 55P03 lock_not_available: a row stayed
 * locked past the lock_timeout of the hot functions (5 s); 40P01 deadlock_detected: this
 * transaction was the one PostgreSQL cancelled to break a cycle of lock waits.
 */
const CONTENTION_CODES = new Set(['55P03', '40P01']);

/** pg and pg-pool report lost or refused connections with these messages and no code. */
const UNAVAILABLE_MESSAGE =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|timeout expired|Query read timeout|Client has encountered a connection error|Cannot use a pool after calling end/i;

/** Read without `instanceof Error`: socket errors are made by Node's core, in another realm under jest. */
function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message, errors } = error as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  // A host name with several addresses (localhost: ::1 and 127.0.0.1) fails with one error per address.
  if (Array.isArray(errors) && errors.some(isDatabaseUnavailable)) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message);
}

function isDatabaseContention(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code } = error as { code?: unknown };
  return typeof code === 'string' && CONTENTION_CODES.has(code);
}

const databaseUnavailable = (message: string): MappedError => ({
  status: 503,
  body: { error: 'UNAVAILABLE', message },
  headers: {},
  internal: true,
});

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
    return {
      status,
      body: { error: code, message: httpExceptionMessage(error, status) },
      headers: {},
      internal: false,
    };
  }
  // A QueryFailedError carries PostgreSQL's code on its driver error.
  const cause = error instanceof QueryFailedError ? (error.driverError as unknown) : error;
  if (isDatabaseContention(error) || isDatabaseContention(cause)) {
    return databaseUnavailable('The database could not complete this call now; nothing was written');
  }
  if (isDatabaseUnavailable(error) || isDatabaseUnavailable(cause)) {
    return databaseUnavailable('The database cannot be reached');
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
