import { QueryFailedError } from 'typeorm';

function sqlState(error: unknown): string | undefined {
  if (error instanceof QueryFailedError) {
    const code = (error.driverError as { code?: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (sqlState(error) !== '23505') return false;
  if (constraint === undefined) return true;
  return ((error as QueryFailedError).driverError as { constraint?: string }).constraint === constraint;
}

/** 40P01: PostgreSQL cancelled this transaction to break a cycle of lock waits; it was rolled back whole. */
export function isDeadlock(error: unknown): boolean {
  return sqlState(error) === '40P01';
}

export function isForeignKeyViolation(error: unknown): boolean {
  return sqlState(error) === '23503';
}
