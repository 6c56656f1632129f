import { QueryFailedError } from 'typeorm';
import { DatabaseFailure, driverFailureOf } from './database-failure';

export type { DatabaseFailure };

/** The database's part in `error` (a QueryFailedError is read through its driver error), or null: not the database's doing. */
export function databaseFailureOf(error: unknown): DatabaseFailure | null {
  return driverFailureOf(error) ?? (error instanceof QueryFailedError ? driverFailureOf(error.driverError) : null);
}
