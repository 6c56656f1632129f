import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, DatabaseTarget } from './database-options';
import { runMigrations } from './migrate';
import { PreparedQueries } from './prepared-queries';
import { QueryCounter } from './query-counter';
import { StatementBatcher } from './statement-batcher';
import { TransactionService } from './transaction.service';

/** TypeORM on the given database (real or embedded); pending migrations run before the app starts. */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(target: DatabaseTarget): DynamicModule {
    const counter = new QueryCounter();
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({ ...buildDataSourceOptions(target, counter), retryAttempts: 2, retryDelay: 1_000 }),
          dataSourceFactory: async (options) => {
            if (!options) throw new Error('Missing data source options');
            const dataSource = await new DataSource(options).initialize();
            await runMigrations(dataSource, target.embedded);
            return dataSource;
          },
        }),
      ],
      providers: [
        TransactionService,
        { provide: QueryCounter, useValue: counter },
        {
          provide: PreparedQueries,
          useFactory: (dataSource: DataSource) => new PreparedQueries(dataSource, !target.embedded),
          inject: [DataSource],
        },
        StatementBatcher,
      ],
      exports: [TransactionService, QueryCounter, PreparedQueries, StatementBatcher],
    };
  }
}
