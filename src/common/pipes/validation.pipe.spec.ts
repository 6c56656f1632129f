import 'reflect-metadata';
import { ValidationPipe } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsString, ValidateNested } from 'class-validator';
import { AppError } from '../errors/app-error';
import { isCheckedJsonBody, markCheckedJsonBody } from '../http/json-body-check';
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
