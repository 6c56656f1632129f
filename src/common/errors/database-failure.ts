/**
 * What a failed database call says about the database, read from PostgreSQL's SQLSTATE, Node's
 * socket errno or pg's message (one rule for the HTTP and WebSocket answers and for readiness):
 * - `unreachable`: no working connection (the server is down, restarting or cut off);
 * - `contention`: this call lost to other transactions and was rolled back;
 * - `resource`: the database is out of a resource (SQLSTATE class 53: 53100 disk_full,
 *   53200 out_of_memory, 53300 too_many_connections, 53400 configuration_limit_exceeded; and
 *   ENOSPC from a file the service writes itself);
 * - `read-only`: the database refuses writes (25006: a standby, or default_transaction_read_only).
 */
export type DatabaseFailure = 'unreachable' | 'contention' | 'resource' | 'read-only';

/**
 * Connection-level failures of PostgreSQL/pg: the database is unreachable, not the request wrong.
 * Socket errnos and 57P01-57P03 (shutdown, crash, starting up); the whole SQLSTATE class 08
 * (connection exception) is read in driverFailureOf, PgBouncer's 08P01 included.
 */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
]);

/**
 * The database refused this call because of other transactions, and rolled it back: nothing was
 * written, and the same call can succeed a moment later. 55P03 lock_not_available: a row stayed
 * locked past the lock_timeout of the hot functions (5 s); 40P01 deadlock_detected: this
 * transaction was the one PostgreSQL cancelled to break a cycle of lock waits.
 */
const CONTENTION_CODES = new Set(['55P03', '40P01']);

/** pg and pg-pool report lost or refused connections with these messages and no code. */
const UNREACHABLE_MESSAGE =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|timeout expired|Query read timeout|Client has encountered a connection error|Cannot use a pool after calling end/i;

/**
 * The database's part in a pg or socket error (not a TypeORM wrapper: databaseFailureOf reads
 * those), or null. Reads `code`/`message` without `instanceof Error`: socket errors are made by
 * Node's core, in another realm under jest. Free of TypeORM, so the webhook delivery thread, which
 * loads no TypeORM, reads failures by the same rule.
 */
export function driverFailureOf(error: unknown): DatabaseFailure | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code, message, errors } = error as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === 'string') {
    if (CONTENTION_CODES.has(code)) return 'contention';
    if (code.length === 5 && code.startsWith('53')) return 'resource';
    if (code === 'ENOSPC') return 'resource';
    if (code === '25006') return 'read-only';
    if (UNREACHABLE_CODES.has(code) || (code.length === 5 && code.startsWith('08'))) return 'unreachable';
  }
  // A host name with several addresses (localhost: ::1 and 127.0.0.1) fails with one error per address.
  if (Array.isArray(errors)) {
    for (const each of errors) {
      const failure = driverFailureOf(each);
      if (failure !== null) return failure;
    }
  }
  return typeof message === 'string' && UNREACHABLE_MESSAGE.test(message) ? 'unreachable' : null;
}
