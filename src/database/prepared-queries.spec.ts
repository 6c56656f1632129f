import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { PreparedQueries } from './prepared-queries';

/** A transaction's manager whose statements (TypeORM's query() and the pg client's) are recorded in `log`. */
function fakeManager(name: string, log: string[]): EntityManager {
  const record = (text: string) => {
    log.push(`${name}: ${text}`);
    return Promise.resolve(text.startsWith('SELECT pg_export_snapshot') ? [{ snapshot: '00000003-0000001B-1' }] : []);
  };
  return {
    query: record,
    queryRunner: {
      databaseConnection: {
        query: ({ text }: { text: string }) => record(text).then((rows) => ({ rows })),
      },
    },
  } as unknown as EntityManager;
}

/** A data source whose pool lends `available` connections, each recording its statements as `part<i>`. */
function fakeDataSource(available: number, log: string[]): DataSource {
  let lent = 0;
  return {
    createQueryRunner: () => {
      const name = `part${lent}`;
      const manager = fakeManager(name, log);
      const runner = {
        manager,
        isTransactionActive: false,
        connect: () =>
          ++lent > available ? Promise.reject(new Error('timeout exceeded when trying to connect')) : Promise.resolve(),
        startTransaction: (level: string) => {
          runner.isTransactionActive = true;
          log.push(`${name}: BEGIN ${level}`);
          return Promise.resolve();
        },
        query: (text: string) => manager.query(text),
        commitTransaction: () => {
          runner.isTransactionActive = false;
          log.push(`${name}: COMMIT`);
          return Promise.resolve();
        },
        rollbackTransaction: () => Promise.resolve(),
        release: () => {
          log.push(`${name}: released`);
          return Promise.resolve();
        },
      };
      return runner as unknown as QueryRunner;
    },
  } as unknown as DataSource;
}

const PARTS = [[{ text: 'INSERT a', params: [] }], [{ text: 'INSERT b', params: [] }]];

describe('PreparedQueries.runLongInParts', () => {
  it('runs each part on a connection of its own, in a transaction that imports the exported snapshot first', async () => {
    const log: string[] = [];
    await new PreparedQueries(fakeDataSource(2, log), true).runLongInParts(fakeManager('main', log), PARTS, 1_000, {
      work_mem: '256MB',
    });
    expect(log.filter((line) => line.startsWith('main'))).toEqual([
      "main: SET LOCAL work_mem = '256MB'",
      'main: SELECT pg_export_snapshot() AS snapshot',
    ]);
    for (const [part, insert] of [
      ['part0', 'INSERT a'],
      ['part1', 'INSERT b'],
    ])
      expect(log.filter((line) => line.startsWith(part))).toEqual([
        `${part}: BEGIN REPEATABLE READ`,
        `${part}: SET TRANSACTION SNAPSHOT '00000003-0000001B-1'`,
        `${part}: SET LOCAL work_mem = '256MB'`,
        `${part}: ${insert}`,
        `${part}: COMMIT`,
        `${part}: released`,
      ]);
  });

  it('runs the parts one after another in the caller transaction when the pool cannot lend a connection for each', async () => {
    const log: string[] = [];
    await new PreparedQueries(fakeDataSource(1, log), true).runLongInParts(fakeManager('main', log), PARTS, 1_000, {
      jit: 'off',
    });
    expect(log).toEqual([
      "main: SET LOCAL jit = 'off'",
      'part0: released',
      'part1: released',
      'main: INSERT a',
      'main: INSERT b',
    ]);
  });

  it('runs the parts in the caller transaction on the embedded database (unnamed statements: one session)', async () => {
    const log: string[] = [];
    await new PreparedQueries(fakeDataSource(2, log), false).runLongInParts(fakeManager('main', log), PARTS, 1_000, {});
    expect(log).toEqual(['main: INSERT a', 'main: INSERT b']);
  });

  it('refuses a setting it would have to quote', async () => {
    await expect(
      new PreparedQueries(fakeDataSource(2, []), true).runLongInParts(fakeManager('main', []), PARTS, 1_000, {
        work_mem: "1'; DROP TABLE x; --",
      }),
    ).rejects.toThrow('Bad setting');
  });
});
