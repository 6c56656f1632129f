import { applyDecorators, createParamDecorator, ExecutionContext } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import type { Request } from 'express';
import { BadRequestError } from '../errors/app-error';
import { INT4_MAX, INT8_MAX, strictBigInteger, strictInteger } from '../validation/strict-integer';

export const LIST_DEFAULT_LIMIT = 50;
export const LIST_MAX_LIMIT = 200;

/** Parses one filter's raw text; throws BadRequestError naming `name` when it is not acceptable. */
export type FilterParser<T> = (raw: string, name: string) => T;

export interface ListQuerySpec<F> {
  /** Names the list inside its cursors, so a cursor of one list is refused by another. */
  list: string;
  /** The keys a cursor of this list may carry (what the list's order is keyed by): see CursorKey. */
  cursorKey: CursorKey;
  filters: { [K in keyof F]: FilterParser<F[K]> };
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
 * of the list's keys (decisions.md "Admin reads").
 */
function decodeCursor<F>(raw: string, spec: ListQuerySpec<F>): string {
  const bad = () => BadRequestError.field('cursor', 'must be the nextCursor of a previous page of this list');
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(raw)) throw bad();
  const text = Buffer.from(raw, 'base64url').toString('utf8');
  const prefix = `${spec.list}:`;
  if (!text.startsWith(prefix)) throw bad();
  const key = text.slice(prefix.length);
  if (encodeCursor(spec.list, key) !== raw || !spec.cursorKey(key)) throw bad();
  return key;
}

/**
 * Reads a list's query strictly: `limit` (1–200, default 50), `cursor`, the list's filters, and
 * nothing else. An unknown or repeated parameter, an empty filter or a bad value is 400 naming it
 * (the admin API refuses unknown fields, decisions.md "Errors").
 */
export function parseListQuery<F>(query: Record<string, unknown>, spec: ListQuerySpec<F>): ListQuery<F> {
  const filterNames = Object.keys(spec.filters) as (keyof F & string)[];
  for (const name of Object.keys(query)) {
    if (name !== 'limit' && name !== 'cursor' && !filterNames.includes(name as keyof F & string)) {
      const known = ['limit', 'cursor', ...filterNames].join(', ');
      throw BadRequestError.field(name.slice(0, 64), `is not a parameter of this list (known: ${known})`);
    }
  }
  const single = (name: string): string | undefined => {
    const value = query[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw BadRequestError.field(name, 'must be given once, as text');
    return value;
  };
  const limit = query.limit === undefined ? LIST_DEFAULT_LIMIT : strictInteger(query.limit, 1, LIST_MAX_LIMIT);
  if (limit === null) throw BadRequestError.field('limit', `must be an integer from 1 to ${LIST_MAX_LIMIT}`);
  const cursor = single('cursor');
  const filters: Partial<F> = {};
  for (const name of filterNames) {
    const raw = single(name);
    if (raw === undefined) continue;
    filters[name] = spec.filters[name](raw, name);
  }
  return { limit, after: cursor === undefined ? undefined : decodeCursor(cursor, spec), filters };
}

/** The handler parameter of an admin list (see parseListQuery). */
export const ListQueryParam = createParamDecorator(<F>(spec: ListQuerySpec<F>, ctx: ExecutionContext): ListQuery<F> =>
  parseListQuery(ctx.switchToHttp().getRequest<Request>().query as Record<string, unknown>, spec),
);

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

export interface FilterDoc {
  name: string;
  description: string;
  schema: Record<string, unknown>;
}

/** OpenAPI: `limit`, `cursor` and the list's filters. */
export const ApiListQuery = (...filters: FilterDoc[]) =>
  applyDecorators(
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: LIST_MAX_LIMIT, default: LIST_DEFAULT_LIMIT },
    }),
    ApiQuery({
      name: 'cursor',
      required: false,
      description: 'nextCursor of the previous page (opaque)',
      schema: { type: 'string' },
    }),
    ...filters.map((filter) =>
      ApiQuery({ name: filter.name, required: false, description: filter.description, schema: filter.schema }),
    ),
  );

// Filter parsers shared by the lists.

/** A positive bigint id (uid, ban id) in decimal digits, returned as a string. */
export const bigIdFilter: FilterParser<string> = (raw, name) => {
  const id = strictBigInteger(raw, 1n, INT8_MAX);
  if (id === null) throw BadRequestError.field(name, 'must be a positive integer');
  return id.toString();
};

export const booleanFilter: FilterParser<boolean> = (raw, name) => {
  if (raw !== 'true' && raw !== 'false') throw BadRequestError.field(name, 'must be true or false');
  return raw === 'true';
};

/** Text matching `pattern`, with `rule` as the message's explanation. */
export const patternFilter =
  (pattern: RegExp, rule: string): FilterParser<string> =>
  (raw, name) => {
    if (!pattern.test(raw)) throw BadRequestError.field(name, `must be ${rule}`);
    return raw;
  };
