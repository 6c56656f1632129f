import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from './database-options';

/**
 * Data source of the TypeORM CLI (`npm run migration:generate|run|revert`). It needs a real
 * PostgreSQL: MIGRATION_DATABASE_URL (a direct connection, past a transaction pooler) or
 * DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/rhythmc_dev.
 */
const url = process.env.MIGRATION_DATABASE_URL?.trim() || process.env.DATABASE_URL;
if (!url) {
  throw new Error('MIGRATION_DATABASE_URL or DATABASE_URL must point at a PostgreSQL database for the migration CLI');
}

export default new DataSource(buildDataSourceOptions({ url, embedded: false }));
