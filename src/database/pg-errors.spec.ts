import { QueryFailedError } from 'typeorm';
import { mayHaveCommitted } from './pg-errors';

const withFields = (message: string, fields: Record<string, unknown>) => Object.assign(new Error(message), fields);
const queryFailed = (driverError: Error) => new QueryFailedError('SELECT rhythmc_upload_record($1)', [], driverError);

describe('mayHaveCommitted: whether a failed statement may still have committed', () => {
  it.each([
    [
      'an ERROR answer (a full data disk)',
      queryFailed(withFields('could not extend file', { code: '53100', severity: 'ERROR' })),
    ],
    [
      'an ERROR answer (a lock timeout)',
      queryFailed(withFields('canceling statement due to lock timeout', { code: '55P03', severity: 'ERROR' })),
    ],
    ['a refused connection', withFields('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED' })],
    [
      'both addresses of localhost refused',
      new AggregateError([
        withFields('connect ECONNREFUSED ::1:5432', { code: 'ECONNREFUSED' }),
        withFields('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED' }),
      ]),
    ],
    ['the connect timeout', new Error('Connection terminated due to connection timeout')],
    ['no free pooled connection in time', new Error('timeout exceeded when trying to connect')],
  ])('no: %s', (_name, error) => {
    expect(mayHaveCommitted(error)).toBe(false);
  });

  it.each([
    ['a connection lost while it ran', new Error('Connection terminated unexpectedly')],
    ['a reset connection', withFields('read ECONNRESET', { code: 'ECONNRESET' })],
    ['the query timeout', new Error('Query read timeout')],
    [
      'a FATAL answer (the server stopping)',
      queryFailed(
        withFields('terminating connection due to administrator command', { code: '57P01', severity: 'FATAL' }),
      ),
    ],
    [
      'a PANIC answer (a WAL segment that cannot be created)',
      withFields('could not write to file', { code: '53100', severity: 'PANIC' }),
    ],
    ['a failure after the answer (a bug reading it)', new TypeError('Cannot read properties of undefined')],
    [
      'some of the addresses reset',
      new AggregateError([
        withFields('connect ECONNREFUSED', { code: 'ECONNREFUSED' }),
        withFields('read ECONNRESET', { code: 'ECONNRESET' }),
      ]),
    ],
  ])('maybe: %s', (_name, error) => {
    expect(mayHaveCommitted(error)).toBe(true);
  });
});
