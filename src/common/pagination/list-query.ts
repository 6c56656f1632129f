import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { BadRequestError } from '../errors/app-error';
import { INT4_MAX, INT8_MAX, QueryIntRange, strictBigInteger } from '../validation/strict-integer';

export const LIST_DEFAULT_LIMIT = 50;
export const LIST_MAX_LIMIT = 200;

/** What an admin list's cursors are made of: the list's name and the keys its order is keyed by. */
export interface ListSpec {
  /** Names the list inside its cursors, so a cursor of one list is refused by another. */
  list: string;
  /** The keys a cursor of this list may carry (what the list's order is keyed by): see CursorKey. */
  cursorKey: CursorKey;
}

/** One page request of an admin list: `limit`, the position after which to continue, the filters given. */
export interface ListQuery<F> {
  limit: number;
  /** The key of the last item of the previous page (decoded from `cursor`); undefined on the first page. */
  after: string | undefined;
  filters: Partial<F>;
}

/** One page of an admin list. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Whether a text is a key of the list, in the one form the list writes it: the decoded cursor's
 * key reaches the list's query only when this says yes, so a forged cursor is a 400, never a
 * database error.
 */
export type CursorKey = (key: string) => boolean;

/** Integer keys from `min` to `max`, in plain decimal (no sign, no leading zero, no exponent). */
export const integerCursorKey =
  (min: bigint, max: bigint): CursorKey =>
  (key) =>
    strictBigInteger(key, min, max)?.toString() === key;

/** A `serial` id (server ids): 1 to 2^31 − 1. */
export const serialCursorKey = integerCursorKey(1n, BigInt(INT4_MAX));
/** A `bigserial` id (uids, ban, play and audit ids): 1 to 2^63 − 1. */
export const bigSerialCursorKey = integerCursorKey(1n, INT8_MAX);

/** The opaque cursor of a list position: base64url of `<list>:<key>`. */
export function encodeCursor(list: string, key: string): string {
  return Buffer.from(`${list}:${key}`, 'utf8').toString('base64url');
}

/**
 * The key of a cursor of this list. A cursor is refused unless it is exactly what encodeCursor
 * writes for this list (another list's cursor, padding or stray bits are not) and its key is one
 * of the list's keys (decisions.md "Admin reads"). Its alphabet and length were checked by
 * ListQueryDto.
 */
function decodeCursor(raw: string, spec: ListSpec): string {
  const text = Buffer.from(raw, 'base64url').toString('utf8');
  const prefix = `${spec.list}:`;
  const key = text.startsWith(prefix) ? text.slice(prefix.length) : undefined;
  if (key === undefined || encodeCursor(spec.list, key) !== raw || !spec.cursorKey(key))
    throw BadRequestError.field('cursor', CURSOR_RULE);
  return key;
}

/**
 * The page request of a list's query DTO, validated by the app's validation pipe like every other
 * query (unknown parameters, bad values and repeated parameters are 400 there): its cursor
 * decoded for this list, its filters as given.
 */
export function listQuery<Q extends ListQueryDto>(query: Q, spec: ListSpec): ListQuery<Omit<Q, 'limit' | 'cursor'>> {
  const { limit, cursor, ...filters } = query;
  return {
    limit: limit ?? LIST_DEFAULT_LIMIT,
    after: cursor === undefined ? undefined : decodeCursor(cursor, spec),
    filters: filters,
  };
}

/**
 * Cuts a page from rows fetched with `limit + 1` (the extra row only says that there is more):
 * the next cursor is the key of the page's last row.
 */
export function toPage<R, T>(
  rows: R[],
  query: ListQuery<unknown>,
  list: string,
  keyOf: (row: R) => string,
  map: (row: R) => T,
): Page<T> {
  const kept = rows.slice(0, query.limit);
  const more = rows.length > query.limit;
  return {
    items: kept.map(map),
    nextCursor: more && kept.length > 0 ? encodeCursor(list, keyOf(kept[kept.length - 1])) : null,
  };
}

const CURSOR_RULE = 'must be the nextCursor of a previous page of this list';

/**
 * The query every admin list takes: `limit` (1–200, default 50) and `cursor`. A list's own DTO
 * extends it with its filters (the decorators below); through the app's validation pipe an
 * unknown parameter, a repeated one, an empty filter or a bad value is 400 naming it.
 */
export class ListQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: LIST_MAX_LIMIT, default: LIST_DEFAULT_LIMIT })
  @QueryIntRange('limit', 1, LIST_MAX_LIMIT)
  limit?: number;

  @ApiPropertyOptional({ type: 'string', description: 'nextCursor of the previous page (opaque)' })
  @IsOptional()
  @IsString({ message: `cursor ${CURSOR_RULE}` })
  @Matches(/^[A-Za-z0-9_-]{1,400}$/, { message: `cursor ${CURSOR_RULE}` })
  cursor?: string;
}

// The filters of the lists' DTOs: each documents itself and words its own 400.

/** Text matching `pattern`; `rule` explains it in the 400 (`<name> must be <rule>`). */
export const TextFilter = (pattern: RegExp, rule: string, description: string): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({ type: 'string', pattern: pattern.source, description }),
    IsOptional(),
    IsString({ message: `$property must be ${rule}` }),
    Matches(pattern, { message: `$property must be ${rule}` }),
  );

/** One of `values`. */
export const OneOfFilter = (values: readonly string[], description: string, fallback?: string): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({ type: 'string', enum: [...values], description, default: fallback }),
    IsOptional(),
    IsIn(values, { message: `$property must be one of ${values.join(', ')}` }),
  );

/** `true` or `false`, read as a boolean. */
export const BooleanFilter = (description: string): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({ type: 'boolean', description }),
    IsOptional(),
    Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value)),
    IsBoolean({ message: '$property must be true or false' }),
  );

/** A positive bigint id (uid) in decimal digits, kept as its string. */
export const BigIdFilter = (description: string): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({ type: 'integer', format: 'int64', minimum: 1, description }),
    IsOptional(),
    IsString({ message: '$property must be a positive integer' }),
    Matches(/^[1-9]\d{0,17}$/, { message: '$property must be a positive integer' }),
  );
