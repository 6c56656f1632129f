import type { Pool } from 'pg';
import { PgDeliveryStore } from './webhook-delivery-store';

/** A pool of one client whose queries fail with `error`; what the store released the client with. */
function failingPool(error: Error): { pool: Pool; released: unknown[] } {
  const released: unknown[] = [];
  const client = {
    query: () => Promise.reject(error),
    release: (broken?: unknown) => released.push(broken),
  };
  return { pool: { connect: () => Promise.resolve(client) } as unknown as Pool, released };
}

describe('PgDeliveryStore', () => {
  it.each([
    ['a query read timeout (the client still waits for the answer it was sent)', new Error('Query read timeout')],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
    [
      'a write refused as read-only',
      Object.assign(new Error('cannot execute UPDATE in a read-only transaction'), { code: '25006' }),
    ],
  ])('closes the connection after %s', async (_name, error) => {
    const { pool, released } = failingPool(error);
    await expect(new PgDeliveryStore(pool).claimDue(10, 30_000)).rejects.toBe(error);
    expect(released).toEqual([error]);
  });

  it('keeps the connection after an error of the statement', async () => {
    const error = Object.assign(new Error('division by zero'), { code: '22012' });
    const { pool, released } = failingPool(error);
    await expect(new PgDeliveryStore(pool).claimDue(10, 30_000)).rejects.toBe(error);
    expect(released).toEqual([undefined]);
  });
});
