import 'reflect-metadata';
import { ValidationPipe } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsString, ValidateNested } from 'class-validator';
import { AppError } from '../errors/app-error';
import { isCheckedJsonBody, markCheckedJsonBody } from '../http/json-body-check';
import { MemoizedQuery } from '../validation/memoized-query';
import { PluginBody } from '../validation/plugin-body';
import { QueryIntRange } from '../validation/strict-integer';
import { createValidationPipe } from './validation.pipe';

class InnerDto {
  @IsInt()
  n!: number;
}

class OuterDto {
  @IsString()
  name!: string;

  @ValidateNested()
  @Type(() => InnerDto)
  inner!: InnerDto;
}

/** Nest's defensive walks, spied on its own prototype: the checked-body pipe overrides all three. */
type Walks = Record<'stripProtoKeys' | 'closeArrayGaps' | 'findNestedBinaryValues', (...args: unknown[]) => unknown>;
const walks = ValidationPipe.prototype as unknown as Walks;

const BODY = { type: 'body' as const, metatype: OuterDto };

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error: unknown = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(AppError);
  return (error as AppError).message;
}

describe('markCheckedJsonBody', () => {
  it('marks the parsed object itself, never a copy or a primitive', () => {
    const body = JSON.parse('{"a":1}') as Record<string, unknown>;
    expect(isCheckedJsonBody(body)).toBe(false);
    markCheckedJsonBody(body);
    expect(isCheckedJsonBody(body)).toBe(true);
    expect(isCheckedJsonBody({ ...body })).toBe(false);
    markCheckedJsonBody('text');
    markCheckedJsonBody(null);
    expect(isCheckedJsonBody('text')).toBe(false);
    expect(isCheckedJsonBody(null)).toBe(false);
  });
});

describe('the validation pipe on a checked JSON body', () => {
  const pipe = createValidationPipe();
  let spies: jest.SpyInstance[];

  beforeEach(() => {
    spies = (['stripProtoKeys', 'closeArrayGaps', 'findNestedBinaryValues'] as const).map((name) =>
      jest.spyOn(walks, name),
    );
  });
  afterEach(() => jest.restoreAllMocks());

  const calls = () => spies.map((spy) => spy.mock.calls.length);

  it('skips Nest’s three walks for a marked body and answers the same instance as for an unmarked one', async () => {
    const marked = JSON.parse('{"name":"x","inner":{"n":1}}') as object;
    markCheckedJsonBody(marked);
    const fromMarked = await pipe.transform(marked, BODY);
    expect(calls()).toEqual([0, 0, 0]);

    const unmarked = JSON.parse('{"name":"x","inner":{"n":1}}') as object;
    const fromUnmarked = await pipe.transform(unmarked, BODY);
    expect(calls().every((count) => count > 0)).toBe(true);

    expect(fromMarked).toBeInstanceOf(OuterDto);
    expect((fromMarked as OuterDto).inner).toBeInstanceOf(InnerDto);
    expect(fromMarked).toEqual(fromUnmarked);
  });

  it('refuses a bad marked body with the same message as an unmarked one', async () => {
    const text = '{"name":5,"inner":{"n":"one"},"extra":true}';
    const marked = JSON.parse(text) as object;
    markCheckedJsonBody(marked);
    const message = await refusal(pipe.transform(marked, BODY));
    expect(message).toBe(await refusal(pipe.transform(JSON.parse(text), BODY)));
    expect(message).toContain('name must be a string');
    expect(message).toContain('inner.n must be an integer number');
    expect(message).toContain('property extra should not exist');
  });

  it('still strips prototype keys from a value that did not pass the JSON body check', async () => {
    const value = JSON.parse('{"name":"x","inner":{"n":1},"__proto__":{"polluted":true}}') as object;
    expect(Object.keys(value)).toContain('__proto__');
    const result = await pipe.transform(value, BODY);
    expect(calls()[0]).toBeGreaterThan(0);
    expect(Object.keys(result as object)).toEqual(['name', 'inner']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('the validation pipe: errors by field', () => {
  const pipe = createValidationPipe();

  async function problems(value: unknown, metadata: Parameters<ValidationPipe['transform']>[1] = BODY) {
    const error: unknown = await (pipe.transform(value, metadata) as Promise<unknown>).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(AppError);
    return { message: (error as AppError).message, errors: (error as AppError).extra.errors };
  }

  it('names nested fields with dots and unknown ones as sent, cut at 64 characters', async () => {
    const key = `x${'😀'.repeat(100)}`;
    expect(await problems({ name: 5, inner: { n: 'one' }, [key]: true })).toEqual({
      message: `${key}: property ${key} should not exist; name must be a string; inner.n must be an integer number`,
      errors: [
        { field: `x${'😀'.repeat(63)}`, message: 'unknown field' },
        { field: 'name', message: 'must be a string' },
        { field: 'inner.n', message: 'must be an integer number' },
      ],
    });
  });

  it('lists at most 20 problems while the message names them all', async () => {
    const body = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`k${i}`, i]));
    const { message, errors } = await problems({ name: 'x', inner: { n: 1 }, ...body });
    expect(message.split('; ')).toHaveLength(25);
    expect(errors).toEqual(Array.from({ length: 20 }, (_, i) => ({ field: `k${i}`, message: 'unknown field' })));
  });

  it('refuses a key named like a method of Object.prototype as an unknown field, nested too', async () => {
    expect(await problems({ name: 'x', inner: { n: 1, valueOf: 1 } })).toEqual({
      message: 'inner.valueOf: property valueOf should not exist',
      errors: [{ field: 'inner.valueOf', message: 'unknown field' }],
    });
  });
});

describe('the validation pipe on a @MemoizedQuery query', () => {
  @MemoizedQuery()
  class TopQuery {
    @QueryIntRange('limit', 1, 100)
    limit?: number;
  }

  @MemoizedQuery()
  @PluginBody()
  class PluginTopQuery {
    @QueryIntRange('limit', 1, 100)
    limit?: number;
  }

  const QUERY = { type: 'query' as const, metatype: TopQuery };

  it('validates a query string once, then hands out an equal, separate DTO', async () => {
    const pipe = createValidationPipe();
    const validate = jest.spyOn(ValidationPipe.prototype, 'transform');
    try {
      const first = (await pipe.transform({ limit: '10' }, QUERY)) as TopQuery;
      const calls = validate.mock.calls.length;
      expect(first).toBeInstanceOf(TopQuery);
      expect(first.limit).toBe(10);
      first.limit = 99;
      const second = (await pipe.transform({ limit: '10' }, QUERY)) as TopQuery;
      expect(validate.mock.calls.length).toBe(calls);
      expect(second).toBeInstanceOf(TopQuery);
      expect(second).not.toBe(first);
      expect(second.limit).toBe(10);
      // Another query string is validated.
      expect(((await pipe.transform({ limit: '11' }, QUERY)) as TopQuery).limit).toBe(11);
      expect(validate.mock.calls.length).toBeGreaterThan(calls);
    } finally {
      validate.mockRestore();
    }
  });

  it('refuses a bad or unknown parameter every time, also after an accepted query', async () => {
    const pipe = createValidationPipe();
    await pipe.transform({ limit: '10' }, QUERY);
    for (let i = 0; i < 2; i++) {
      expect(await refusal(pipe.transform({ limit: '0' }, QUERY))).toBe('limit must be an integer from 1 to 100');
      expect(await refusal(pipe.transform({ limit: '10', x: '1' }, QUERY))).toBe('x: property x should not exist');
      expect(await refusal(pipe.transform({ limit: ['10', '10'] }, QUERY))).toMatch(/^limit/);
    }
  });

  it('reports the parameters a plugin query ignored on every call, kept or not', async () => {
    const ignored: Array<[string, string[]]> = [];
    const pipe = createValidationPipe((dto, fields) => ignored.push([dto, fields]));
    const metadata = { type: 'query' as const, metatype: PluginTopQuery };
    for (let i = 0; i < 3; i++)
      expect(((await pipe.transform({ limit: '5', t: '123' }, metadata)) as PluginTopQuery).limit).toBe(5);
    expect(ignored).toEqual([
      ['PluginTopQuery', ['t']],
      ['PluginTopQuery', ['t']],
      ['PluginTopQuery', ['t']],
    ]);
  });
});
