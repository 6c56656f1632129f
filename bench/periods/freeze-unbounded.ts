/**
 * Freezes (archives, and grants by its close rule) a closed, unarchived period with the period
 * job's own code (PeriodJobService.freeze) on one plain pg connection, in one transaction, without
 * the service pool's 15 s client-side query timeout, which the archive of a 1M period exceeds on a
 * loaded machine (docs/benchmarks.md "Closing a period and archived reads"). For the benchmark's
 * archived reads after a close that failed: PERIOD=<id> npx ts-node --transpile-only bench/periods/freeze-unbounded.ts
 */
import 'reflect-metadata';
import { Client } from 'pg';
import type { EntityManager } from 'typeorm';
import type { AppConfig } from '../../src/config/app-config';
import type { CatalogService } from '../../src/catalog/catalog.service';
import type { Clock } from '../../src/common/clock';
import type { EventBus } from '../../src/common/events/events';
import type { PreparedQueries } from '../../src/database/prepared-queries';
import type { ReadQueries } from '../../src/database/read-queries';
import type { TransactionService } from '../../src/database/transaction.service';
import { CatalogRepository } from '../../src/catalog/catalog.repository';
import { PeriodRepository } from '../../src/ranking/periods/period.repository';
import { PeriodJobService } from '../../src/ranking/periods/period-job.service';
import { benchDatabaseUrl, fmt, loadAverage, runMain } from '../harness/env';

runMain(async () => {
  const period = process.env.PERIOD;
  if (!period || !/^\d+$/.test(period)) throw new Error('PERIOD=<id> of a closed, unarchived period');
  const client = new Client({ connectionString: benchDatabaseUrl('rhythmc_bench_periods_close') });
  await client.connect();
  try {
    const manager = {
      query: async (sql: string, params?: unknown[]): Promise<unknown[]> =>
        (await client.query(sql, params)).rows as unknown[],
    } as unknown as EntityManager;
    const unused = null as unknown as PreparedQueries & ReadQueries;
    const catalogRepo = new CatalogRepository(null as never, null as never, null as never);
    const catalog = {
      grantToPlayers: (key: string, uids: string[], m: EntityManager) => catalogRepo.grantToPlayers(key, uids, m),
    } as unknown as CatalogService;
    const config = { serverTokenTtlSeconds: 3600, serverTokenRefreshGraceSeconds: 60 } as AppConfig;
    const job = new PeriodJobService(
      new PeriodRepository(unused, unused),
      catalog,
      null as unknown as TransactionService,
      null as unknown as Clock,
      config,
      null as unknown as EventBus,
    );
    const load = loadAverage();
    const t0 = performance.now();
    await client.query('BEGIN');
    const frozen = await job.freeze(period, manager);
    await client.query('COMMIT');
    console.log(
      `period ${period} frozen in ${fmt((performance.now() - t0) / 1000, 2)} s (archive + grant, one transaction, no query timeout): ` +
        `${frozen ? `granted ${frozen.granted?.uids.length ?? 0}` : 'already frozen'} — load ${load.toFixed(2)} before, ${loadAverage().toFixed(2)} after`,
    );
  } finally {
    await client.end();
  }
});
