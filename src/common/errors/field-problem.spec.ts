import { BadRequestError } from './app-error';
import { mapError } from './error-body';
import { boundedProblems, MAX_FIELD_LENGTH, MAX_FIELD_PROBLEMS } from './field-problem';

describe('boundedProblems', () => {
  it('keeps at most 20 problems, each listed once', () => {
    const many = Array.from({ length: 30 }, (_, i) => ({ field: `f${i}`, message: 'must be a string' }));
    expect(boundedProblems(many)).toEqual(many.slice(0, MAX_FIELD_PROBLEMS));
    const twice = { index: 2, field: 'name', message: 'must be a string' };
    expect(boundedProblems([twice, { ...twice }, { ...twice, index: 3 }])).toEqual([twice, { ...twice, index: 3 }]);
  });

  it('cuts a field at 64 code points without splitting a surrogate pair, and a message at 500', () => {
    const [long] = boundedProblems([{ field: 'k'.repeat(10_000), message: 'm'.repeat(10_000) }]);
    expect(long).toEqual({ field: 'k'.repeat(MAX_FIELD_LENGTH), message: 'm'.repeat(500) });
    const [emoji] = boundedProblems([{ field: '😀'.repeat(100), message: 'unknown field' }]);
    expect(emoji.field).toBe('😀'.repeat(MAX_FIELD_LENGTH));
  });
});

describe('BadRequestError', () => {
  it('carries errors beside message in the body, an empty list when no field is at fault', () => {
    expect(mapError(new BadRequestError('Malformed JSON body')).body).toEqual({
      error: 'BAD_REQUEST',
      message: 'Malformed JSON body',
      errors: [],
    });
    expect(mapError(BadRequestError.field('until', 'must be in the future')).body).toEqual({
      error: 'BAD_REQUEST',
      message: 'until must be in the future',
      errors: [{ field: 'until', message: 'must be in the future' }],
    });
    expect(mapError(BadRequestError.field('groups', 'the name x is used twice', 'label')).body).toEqual({
      error: 'BAD_REQUEST',
      message: 'groups: the name x is used twice',
      errors: [{ field: 'groups', message: 'the name x is used twice' }],
    });
  });
});
