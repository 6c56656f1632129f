import { QueryFailedError } from 'typeorm';
import { BadRequestError } from './app-error';
import { mapError } from './error-body';

const unavailable = {
  status: 503,
  body: { error: 'UNAVAILABLE', message: 'The database cannot be reached' },
  headers: { 'Retry-After': '5' },
  internal: true,
};
const internal = {
  status: 500,
  body: { error: 'INTERNAL_ERROR', message: 'Internal server error' },
  headers: {},
  internal: true,
};

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
const queryFailed = (driverError: Error) => new QueryFailedError('SELECT 1', [], driverError);
const severeCode = (message: string, code: string, severity: string) =>
  Object.assign(new Error(message), { code, severity });

describe('mapError: an unreachable database is 503 UNAVAILABLE', () => {
  it.each([
    ['connection refused', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['connection reset', withCode('read ECONNRESET', 'ECONNRESET')],
    ['unknown host', withCode('getaddrinfo ENOTFOUND db', 'ENOTFOUND')],
    ['unreachable host', withCode('connect EHOSTUNREACH 10.0.0.9:5432', 'EHOSTUNREACH')],
    [
      'both addresses of localhost refused',
      new AggregateError([
        withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED'),
        withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      ]),
    ],
    ['a pooled connection lost', new Error('Connection terminated unexpectedly')],
    ['the connect timeout', new Error('Connection terminated due to connection timeout')],
    ['the client connect timeout', new Error('timeout expired')],
    ['no free pooled connection in time', new Error('timeout exceeded when trying to connect')],
    ['a client that already failed', new Error('Client has encountered a connection error and is not queryable')],
    ['the pool closed at shutdown', new Error('Cannot use a pool after calling end on the pool')],
    [
      'admin shutdown (57P01) inside a query',
      queryFailed(withCode('terminating connection due to administrator command', '57P01')),
    ],
    ['the server starting up (57P03)', withCode('the database system is starting up', '57P03')],
    ['a connection exception (08006)', queryFailed(withCode('connection failure', '08006'))],
    // PgBouncer's words when the server connection under a query died (PostgreSQL restarted).
    ['a protocol violation (08P01, PgBouncer)', severeCode('server conn crashed?', '08P01', 'FATAL')],
    ['a connection exception of the class (08007)', queryFailed(withCode('transaction resolution unknown', '08007'))],
  ])('%s', (_name, error) => {
    expect(mapError(error)).toEqual(unavailable);
  });

  it.each([
    [
      'a row held past the lock timeout (55P03)',
      queryFailed(withCode('canceling statement due to lock timeout', '55P03')),
    ],
    ['the victim of a deadlock (40P01)', queryFailed(withCode('deadlock detected', '40P01'))],
    ['a deadlock outside a query', withCode('deadlock detected', '40P01')],
  ])('answers %s 503 UNAVAILABLE: nothing was written, the call can be made again', (_name, error) => {
    expect(mapError(error)).toEqual({
      ...unavailable,
      body: { error: 'UNAVAILABLE', message: 'The database could not complete this call now; nothing was written' },
      headers: { 'Retry-After': '1' },
    });
  });

  /** What PostgreSQL and PGlite answered when their disk was full (test/e2e/fault-embedded-disk-full). */
  const severe = (message: string, code: string, severity: string) =>
    Object.assign(new Error(message), { code, severity });
  it.each([
    ['a data file that cannot grow (53100)', queryFailed(withCode('could not extend file "base/5/16385"', '53100'))],
    [
      'a WAL segment that cannot be created (PANIC 53100)',
      severe('could not write to file "pg_wal/xlogtemp.42": No space left on device', '53100', 'PANIC'),
    ],
    [
      'the commit log that cannot grow (53100)',
      queryFailed(withCode('could not access status of transaction 0', '53100')),
    ],
    ['out of memory (53200)', queryFailed(withCode('out of memory', '53200'))],
    ['too many connections (53300)', withCode('sorry, too many clients already', '53300')],
    ['a configuration limit (53400)', queryFailed(withCode('too many range table entries', '53400'))],
    ['a file of the service itself (ENOSPC)', withCode('ENOSPC: no space left on device, write', 'ENOSPC')],
  ])('answers %s 503 UNAVAILABLE with Retry-After, never 500', (_name, error) => {
    expect(mapError(error)).toEqual({
      ...unavailable,
      body: { error: 'UNAVAILABLE', message: 'The database is out of resources (disk space, memory or connections)' },
    });
  });

  it('answers a read-only database (25006) 503 UNAVAILABLE with Retry-After', () => {
    const error = queryFailed(withCode('cannot execute INSERT in a read-only transaction', '25006'));
    expect(mapError(error)).toEqual({
      ...unavailable,
      body: { error: 'UNAVAILABLE', message: 'The database refuses writes (read-only)' },
    });
  });

  it.each([
    ['a unique violation', queryFailed(withCode('duplicate key value violates unique constraint', '23505'))],
    ['a syntax error', queryFailed(withCode('syntax error at or near "x"', '42601'))],
    ['a plain bug', new TypeError('Cannot read properties of undefined')],
  ])('keeps %s a 500', (_name, error) => {
    expect(mapError(error)).toEqual(internal);
  });

  it('keeps errors that carry their code', () => {
    expect(mapError(new BadRequestError('uid: must be a positive integer')).status).toBe(400);
  });
});
