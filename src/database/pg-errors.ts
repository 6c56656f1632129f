import { QueryFailedError } from 'typeorm';

function sqlState(error: unknown): string | undefined {
  if (error instanceof QueryFailedError) {
    const code = (error.driverError as { code?: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (sqlState(error) !== '23505') return false;
  if (constraint === undefined) return true;
  return ((error as QueryFailedError).driverError as { constraint?: string }).constraint === constraint;
}

/** 40P01: PostgreSQL cancelled this transaction to break a cycle of lock waits; it was rolled back whole. */
export function isDeadlock(error: unknown): boolean {
  return sqlState(error) === '40P01';
}

/** 55P03: a row asked for with NOWAIT (or past lock_timeout) is locked by another transaction. */
export function isLockNotAvailable(error: unknown): boolean {
  return sqlState(error) === '55P03';
}

export function isForeignKeyViolation(error: unknown): boolean {
  return sqlState(error) === '23503';
}

/** The connection was never opened: the statement was not sent. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const NOT_SENT_MESSAGE =
  /timeout exceeded when trying to connect|Connection terminated due to connection timeout|Cannot use a pool after calling end/i;

function notSent(error: object): boolean {
  const { code, message, errors } = error as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === 'string' && NOT_SENT_CODES.has(code)) return true;
  // A host name with several addresses fails with one error per address.
  if (Array.isArray(errors) && errors.length > 0)
    return (errors as unknown[]).every((each) => typeof each === 'object' && each !== null && notSent(each));
  return typeof message === 'string' && NOT_SENT_MESSAGE.test(message);
}

/**
 * Whether a statement that failed outside a transaction may still have committed: true unless the
 * database answered it with an ERROR (the statement rolled back whole) or it was never sent (no
 * connection could be opened). A lost connection, a read timeout, FATAL or PANIC (the server
 * stopped or crashed while it ran), or a failure after the answer (a bug reading it) leave it open.
 */
export function mayHaveCommitted(error: unknown): boolean {
  const cause: unknown = error instanceof QueryFailedError ? error.driverError : error;
  if (typeof cause !== 'object' || cause === null) return true;
  const { code, severity } = cause as { code?: unknown; severity?: unknown };
  if (severity === 'ERROR' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return false;
  return !notSent(cause);
}
