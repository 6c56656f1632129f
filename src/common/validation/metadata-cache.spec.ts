import 'reflect-metadata';
import { getMetadataStorage, IsInt, IsString, MetadataStorage, registerDecorator, validate } from 'class-validator';
import { cacheValidationMetadata } from './metadata-cache';

class Base {
  @IsString()
  a!: unknown;
}

class Child extends Base {
  @IsInt()
  b!: unknown;

  @IsInt({ groups: ['strict'] })
  c!: unknown;
}

const uncached = (target: typeof Base, always = false, groups?: string[]) =>
  MetadataStorage.prototype.getTargetValidationMetadatas.call(getMetadataStorage(), target, '', always, false, groups);

const failed = async (value: object) => (await validate(value)).map((error) => error.property);

describe('cacheValidationMetadata', () => {
  beforeAll(() => cacheValidationMetadata());

  it('answers what class-validator works out, the same array again, per argument tuple', () => {
    const storage = getMetadataStorage();
    const first = storage.getTargetValidationMetadatas(Child, '', false, false);
    // Without groups every rule applies, the group's too (class-validator's own semantics).
    expect(first.map((m) => m.propertyName).sort()).toEqual(['a', 'b', 'c']);
    expect(first).toEqual(uncached(Child));
    expect(storage.getTargetValidationMetadatas(Child, '', false, false)).toBe(first);
    expect(storage.groupByPropertyName(first)).toBe(storage.groupByPropertyName(first));
    // Another tuple is its own answer: with a group, only that group's rules.
    const strict = storage.getTargetValidationMetadatas(Child, '', false, false, ['strict']);
    expect(strict.map((m) => m.propertyName)).toEqual(['c']);
    expect(strict).toEqual(uncached(Child, false, ['strict']));
    expect(storage.getTargetValidationMetadatas(Base, '', false, false)).toEqual(uncached(Base));
    // Not a class (a nested object whose `constructor` is data): the library's own answer, no throw.
    const notAClass = { constructor: 'x' } as unknown as typeof Base;
    expect(storage.getTargetValidationMetadatas(notAClass, '', false, false)).toEqual([]);
    // Twice is once: the wrappers are not stacked.
    cacheValidationMetadata();
    expect(storage.getTargetValidationMetadatas(Child, '', false, false)).toBe(first);
  });

  it('validates as before, and a rule registered after a validation counts from the next one', async () => {
    const child = Object.assign(new Child(), { a: 1, b: 'x' });
    expect(await failed(child)).toEqual(['b', 'c', 'a']);
    registerDecorator({
      name: 'isLate',
      target: Child,
      propertyName: 'late',
      validator: { validate: (value: unknown) => value === 'late' },
    });
    expect(await failed(child)).toEqual(['b', 'c', 'late', 'a']);
    expect(await failed(Object.assign(new Child(), { a: 'ok', b: 1, c: 2, late: 'late' }))).toEqual([]);
  });
});
