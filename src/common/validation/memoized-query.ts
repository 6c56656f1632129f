const MEMOIZED_QUERY_KEY = Symbol('rhythmc:memoized-query');

/** Distinct queries kept per DTO; past it the DTO's memo starts again empty (a caller varying its query gains nothing). */
export const QUERY_MEMO_SIZE = 256;

/**
 * Marks the query DTO of a hot read (the boards, baltop, profiles): a query string the validation
 * pipe accepted once is answered from a memo the next time (docs/decisions.md "Validated queries
 * kept per DTO"). Only for DTOs whose validation depends on the query alone (no clock, no
 * database) and whose fields are primitives or arrays of them. Read on the class itself: a subclass is not marked.
 */
export const MemoizedQuery = (): ClassDecorator => (target) => {
  Reflect.defineMetadata(MEMOIZED_QUERY_KEY, true, target);
};

export function isMemoizedQuery(type: unknown): type is abstract new () => object {
  return typeof type === 'function' && Reflect.getOwnMetadata(MEMOIZED_QUERY_KEY, type) === true;
}

/** What a query validated to: the DTO instance (kept, never handed out) and the unknown fields it ignored. */
export interface ValidatedQuery {
  instance: object;
  ignored: string[];
}

/**
 * Accepted queries per DTO, keyed by the parsed query (names and values as sent, in order). Only
 * successes are kept: a refused query goes through the pipe every time, so its 400 is built as
 * before. Each hit is a fresh copy (arrays copied too), so a handler changing its DTO changes
 * nothing for the next caller.
 */
export class QueryMemo {
  private readonly byType = new Map<unknown, Map<string, ValidatedQuery>>();

  /** The memo key of a parsed query, or null when it holds anything but strings and arrays of strings. */
  static keyOf(query: unknown): string | null {
    if (typeof query !== 'object' || query === null || Array.isArray(query)) return null;
    for (const value of Object.values(query))
      if (typeof value !== 'string' && !(Array.isArray(value) && value.every((item) => typeof item === 'string')))
        return null;
    // The object itself: its keys serialise in the order Object.entries gives, without the pairs' arrays.
    return JSON.stringify(query);
  }

  get(type: unknown, key: string): ValidatedQuery | undefined {
    const kept = this.byType.get(type)?.get(key);
    return kept === undefined ? undefined : { instance: copyOf(kept.instance), ignored: kept.ignored };
  }

  /** Keeps a copy of `instance` when every field is a primitive or an array of primitives. */
  set(type: unknown, key: string, instance: object, ignored: string[]): void {
    if (!Object.values(instance).every(isFlat)) return;
    let memo = this.byType.get(type);
    if (memo === undefined) this.byType.set(type, (memo = new Map<string, ValidatedQuery>()));
    if (memo.size >= QUERY_MEMO_SIZE) memo.clear();
    memo.set(key, { instance: copyOf(instance), ignored });
  }
}

const isPrimitive = (value: unknown) => value === null || (typeof value !== 'object' && typeof value !== 'function');
const isFlat = (value: unknown) => isPrimitive(value) || (Array.isArray(value) && value.every(isPrimitive));

function copyOf(instance: object): object {
  const copy = Object.create(Object.getPrototypeOf(instance) as object | null) as Record<string, unknown>;
  for (const [key, value] of Object.entries(instance) as Array<[string, unknown]>)
    copy[key] = Array.isArray(value) ? [...(value as unknown[])] : value;
  return copy;
}
