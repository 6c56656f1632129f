import 'reflect-metadata';
import { isMemoizedQuery, MemoizedQuery, QUERY_MEMO_SIZE, QueryMemo } from './memoized-query';

@MemoizedQuery()
class BoardQuery {
  limit?: number;
  uids?: string[];
}

class OtherQuery {
  limit?: number;
}

const instance = (fields: Partial<BoardQuery>) => Object.assign(new BoardQuery(), fields);

describe('QueryMemo', () => {
  it('is opt-in per DTO', () => {
    expect(isMemoizedQuery(BoardQuery)).toBe(true);
    expect(isMemoizedQuery(OtherQuery)).toBe(false);
    expect(isMemoizedQuery(undefined)).toBe(false);
  });

  it('keys a query by its names and values in order, and only strings and arrays of strings', () => {
    expect(QueryMemo.keyOf({ limit: '10' })).toBe('{"limit":"10"}');
    expect(QueryMemo.keyOf({ limit: '10', k: '5' })).not.toBe(QueryMemo.keyOf({ k: '5', limit: '10' }));
    expect(QueryMemo.keyOf({ limit: ['1', '2'] })).toBe('{"limit":["1","2"]}');
    expect(QueryMemo.keyOf({})).toBe('{}');
    // A parsed query has no prototype, so every name is its own key, `__proto__` too.
    const parsed = Object.assign(Object.create(null) as Record<string, string>, { limit: '10' });
    Object.defineProperty(parsed, '__proto__', { value: 'x', enumerable: true });
    expect(QueryMemo.keyOf(parsed)).toBe('{"limit":"10","__proto__":"x"}');
    expect(QueryMemo.keyOf(parsed)).not.toBe(QueryMemo.keyOf({ limit: '10' }));
    expect(QueryMemo.keyOf({ limit: { $gt: '1' } })).toBeNull();
    expect(QueryMemo.keyOf({ limit: 10 })).toBeNull();
    expect(QueryMemo.keyOf(null)).toBeNull();
    expect(QueryMemo.keyOf(['10'])).toBeNull();
  });

  it('hands out a fresh instance of the DTO each time, arrays copied', () => {
    const memo = new QueryMemo();
    const validated = instance({ limit: 10, uids: ['1', '2'] });
    memo.set(BoardQuery, 'a', validated, ['x']);
    validated.limit = 99;
    validated.uids!.push('3');
    const first = memo.get(BoardQuery, 'a')!;
    expect(first.instance).toBeInstanceOf(BoardQuery);
    expect(first.instance).toEqual(instance({ limit: 10, uids: ['1', '2'] }));
    expect(first.ignored).toEqual(['x']);
    (first.instance as BoardQuery).limit = 1;
    (first.instance as BoardQuery).uids!.pop();
    expect(memo.get(BoardQuery, 'a')!.instance).toEqual(instance({ limit: 10, uids: ['1', '2'] }));
    expect(memo.get(OtherQuery, 'a')).toBeUndefined();
  });

  it('keeps no instance holding an object, and starts again past QUERY_MEMO_SIZE', () => {
    const memo = new QueryMemo();
    memo.set(BoardQuery, 'nested', Object.assign(new BoardQuery(), { limit: { n: 1 } }), []);
    expect(memo.get(BoardQuery, 'nested')).toBeUndefined();
    for (let i = 0; i < QUERY_MEMO_SIZE; i++) memo.set(BoardQuery, String(i), instance({ limit: i }), []);
    expect(memo.get(BoardQuery, '0')).toBeDefined();
    memo.set(BoardQuery, 'one more', instance({ limit: 1 }), []);
    expect(memo.get(BoardQuery, '0')).toBeUndefined();
    expect(memo.get(BoardQuery, 'one more')).toBeDefined();
  });
});
