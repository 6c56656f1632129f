import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, DATABASE_TARGET, DatabaseTarget, namedStatementsOn } from './database-options';
import { DATABASE_BACKUP_SOURCE, DatabaseBackupService } from './database-backup.service';
import { EmbeddedMaintenanceRepository } from './embedded/embedded-maintenance.repository';
import { EmbeddedMaintenance } from './embedded/embedded-maintenance.service';
import { assertNoPendingMigrations, runMigrations } from './migrate';
import { PreparedQueries } from './prepared-queries';
import { QueryCounter } from './query-counter';
import { ReadQueries } from './read-queries';
import { StatementBatcher } from './statement-batcher';
import { TransactionService } from './transaction.service';
import { WriteRefusals } from './write-refusals';

/**
 * The start-up migrations on a connection of their own (MIGRATION_DATABASE_URL: direct, not
 * through a transaction pooler), closed once the schema is up to date.
 */
async function migrateThrough(url: string): Promise<void> {
  const dataSource = await new DataSource(buildDataSourceOptions({ url, embedded: false })).initialize();
  try {
    await runMigrations(dataSource, false);
  } finally {
    await dataSource.destroy();
  }
}

/**
 * TypeORM on the given database (real or embedded); pending migrations run before the app starts,
 * or with MIGRATE_ON_START=false must have been run by the schema's owner.
 */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(target: DatabaseTarget, migrateOnStart = true): DynamicModule {
    const counter = new QueryCounter();
    const refusals = new WriteRefusals();
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({
            ...buildDataSourceOptions(target, { counter, refusals }),
            retryAttempts: 2,
            retryDelay: 1_000,
          }),
          dataSourceFactory: async (options) => {
            if (!options) throw new Error('Missing data source options');
            const dataSource = await new DataSource(options).initialize();
            try {
              if (migrateOnStart && target.migrationUrl) await migrateThrough(target.migrationUrl);
              else if (migrateOnStart) await runMigrations(dataSource, target.embedded, undefined, target.poolMode);
              else await assertNoPendingMigrations(dataSource);
            } catch (error) {
              // The start fails (or is retried): close this pool rather than leave it open.
              await dataSource.destroy();
              throw error;
            }
            return dataSource;
          },
        }),
      ],
      providers: [
        TransactionService,
        { provide: QueryCounter, useValue: counter },
        { provide: WriteRefusals, useValue: refusals },
        {
          provide: PreparedQueries,
          useFactory: (dataSource: DataSource) => new PreparedQueries(dataSource, namedStatementsOn(target)),
          inject: [DataSource],
        },
        {
          provide: ReadQueries,
          useFactory: (prepared: PreparedQueries, dataSource: DataSource) =>
            new ReadQueries(prepared, dataSource, target.read ?? null, namedStatementsOn(target), { counter }),
          inject: [PreparedQueries, DataSource],
        },
        StatementBatcher,
        { provide: DATABASE_BACKUP_SOURCE, useValue: target.backup ?? null },
        { provide: DATABASE_TARGET, useValue: target },
        DatabaseBackupService,
        EmbeddedMaintenanceRepository,
        EmbeddedMaintenance,
      ],
      exports: [
        DATABASE_TARGET,
        TransactionService,
        QueryCounter,
        WriteRefusals,
        PreparedQueries,
        ReadQueries,
        StatementBatcher,
        DatabaseBackupService,
      ],
    };
  }
}
