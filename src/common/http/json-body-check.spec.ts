import { jsonBodyError, jsonBodyProblem, MAX_JSON_DEPTH, MAX_JSON_KEYS } from './json-body-check';

describe('jsonBodyProblem', () => {
  it('accepts ordinary JSON, astral characters included', () => {
    expect(
      jsonBodyProblem({ name: 'lobby 🎵', list: ['a', { b: [1, null, true] }], 'key with space': 'é' }),
    ).toBeNull();
    expect(jsonBodyProblem([])).toBeNull();
  });

  it.each([
    [{ name: 'a\u0000b' }, 'name must not contain the NUL character (\\u0000)'],
    [
      { options: { sound: { x: ['ok', '\u0000'] } } },
      'options.sound.x[1] must not contain the NUL character (\\u0000)',
    ],
    [[{ name: 'ok' }, { name: 'x\ud800' }], '[1].name must not contain a lone surrogate (\\ud800-\\udfff)'],
    [{ 'a b': '\udc00' }, '["a b"] must not contain a lone surrogate (\\ud800-\\udfff)'],
    ['\u0000', 'the request body must not contain the NUL character (\\u0000)'],
    [{ options: { 'k\u0000': 1 } }, 'The key "k\\u0000" in options must not contain the NUL character (\\u0000)'],
  ])('names the string in %j', (body, message) => {
    expect(jsonBodyProblem(body)).toBe(message);
  });

  it.each([
    ['{"name":"x","__proto__":{"admin":true}}', 'The key "__proto__" in the request body is not accepted'],
    ['{"options":{"constructor":1}}', 'The key "constructor" in options is not accepted'],
    ['[{"unlockMethod":{"prototype":{}}}]', 'The key "prototype" in [0].unlockMethod is not accepted'],
  ])('refuses the reserved key in %s', (text, message) => {
    expect(jsonBodyProblem(JSON.parse(text))).toBe(message);
  });

  it('accepts those words as values and inside longer keys', () => {
    expect(jsonBodyProblem({ kind: 'constructor', __proto__x: 1, prototypes: ['__proto__'] })).toBeNull();
  });

  const nested = (levels: number): unknown => {
    let value: unknown = 1;
    for (let level = 0; level < levels; level++) value = level % 2 ? [value] : { a: value };
    return value;
  };

  it(`accepts ${MAX_JSON_DEPTH} levels of objects and arrays and refuses one more`, () => {
    expect(jsonBodyProblem(nested(MAX_JSON_DEPTH))).toBeNull();
    expect(jsonBodyProblem(nested(MAX_JSON_DEPTH + 1))).toMatch(
      new RegExp(`^The request body nests deeper than ${MAX_JSON_DEPTH} levels \\(at (\\[0\\]|\\.?a)+\\)$`),
    );
  });

  it('walks a body of 200,000 levels without exhausting the stack', () => {
    expect(JSON.parse('['.repeat(200_000) + ']'.repeat(200_000))).toBeDefined();
    expect(jsonBodyProblem(JSON.parse('['.repeat(200_000) + ']'.repeat(200_000)))).toMatch(
      /^The request body nests deeper than 64 levels/,
    );
  });

  it('names the value by the root it is given (a WebSocket frame)', () => {
    expect(jsonBodyProblem(nested(MAX_JSON_DEPTH + 1), 'the frame')).toMatch(
      /^The frame nests deeper than 64 levels \(at /,
    );
    expect(jsonBodyProblem(JSON.parse('{"__proto__":1}'), 'the frame')).toBe(
      'The key "__proto__" in the frame is not accepted',
    );
    expect(jsonBodyProblem({ data: { message: 'a\u0000' } }, 'the frame')).toBe(
      'data.message must not contain the NUL character (\\u0000)',
    );
  });

  it(`accepts ${MAX_JSON_KEYS} keys in an object and refuses one more`, () => {
    const keyed = (count: number) => Object.fromEntries(Array.from({ length: count }, (_value, i) => [`k${i}`, i]));
    expect(jsonBodyProblem({ options: keyed(MAX_JSON_KEYS), list: Array(10_000).fill(keyed(3)) })).toBeNull();
    expect(jsonBodyProblem({ options: { sound: keyed(MAX_JSON_KEYS + 1) } })).toBe(
      `options.sound has more than ${MAX_JSON_KEYS} keys`,
    );
    expect(jsonBodyProblem(keyed(MAX_JSON_KEYS + 1), 'the frame')).toBe(
      `the frame has more than ${MAX_JSON_KEYS} keys`,
    );
  });

  it('names the field of a text value that breaks a rule in the 400, by index in a list, and no field otherwise', () => {
    expect(jsonBodyError({ options: { sound: { x: 'a\u0000' } } })?.errors).toEqual([
      { field: 'options.sound.x', message: 'must not contain the NUL character (\\u0000)' },
    ]);
    expect(jsonBodyError([{ name: 'ok' }, { tags: ['a', '\ud800'] }])?.errors).toEqual([
      { index: 1, field: 'tags.1', message: 'must not contain a lone surrogate (\\ud800-\\udfff)' },
    ]);
    expect(jsonBodyError(['\u0000'])?.errors).toEqual([
      { index: 0, field: '', message: 'must not contain the NUL character (\\u0000)' },
    ]);
    expect(jsonBodyError({ a: { __proto__x: 1, 'b\u0000': 1 } })).toMatchObject({
      message: 'The key "b\\u0000" in a must not contain the NUL character (\\u0000)',
      errors: [],
    });
    expect(jsonBodyError({ ok: true })).toBeNull();
  });
});
