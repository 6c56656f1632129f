import { namedStatementsOn } from './database-options';

describe('namedStatementsOn', () => {
  it('names the hot statements on PostgreSQL only when no transaction pooler sits between', () => {
    expect(namedStatementsOn({ url: 'postgres://db/x', embedded: false })).toBe(true);
    expect(namedStatementsOn({ url: 'postgres://db/x', embedded: false, poolMode: 'session' })).toBe(true);
    expect(namedStatementsOn({ url: 'postgres://pgbouncer/x', embedded: false, poolMode: 'transaction' })).toBe(false);
    expect(namedStatementsOn({ url: 'postgres://127.0.0.1/x', embedded: true })).toBe(false);
  });
});
