import { validate } from 'class-validator';
import { IsText, textLength } from './is-text';

class Named {
  @IsText(4)
  name!: unknown;

  @IsText(2, { each: true })
  tags: unknown[] = [];
}

async function problems(name: unknown, tags: unknown[] = []): Promise<string[]> {
  const named = Object.assign(new Named(), { name, tags });
  return (await validate(named)).flatMap((error) => Object.values(error.constraints ?? {}));
}

describe('textLength', () => {
  it('counts code points, like a varchar column', () => {
    expect(textLength('')).toBe(0);
    expect(textLength('abc')).toBe(3);
    expect(textLength('a\uFE0F')).toBe(2);
    expect(textLength('😀😀')).toBe(2);
    expect(textLength('e\u0301')).toBe(2);
    // A lone surrogate is one unit (the JSON parser lets it through).
    expect(textLength('\ud800x')).toBe(2);
    expect(textLength('x\udc00')).toBe(2);
  });
});

describe('IsText', () => {
  it("takes strings up to the length and refuses longer ones and non-strings with MaxLength's message", async () => {
    expect(await problems('abcd')).toEqual([]);
    expect(await problems('😀😀😀😀')).toEqual([]);
    expect(await problems('abcde')).toEqual(['name must be shorter than or equal to 4 characters']);
    expect(await problems('a\uFE0Fa\uFE0Fa')).toEqual(['name must be shorter than or equal to 4 characters']);
    expect(await problems(5)).toEqual(['name must be shorter than or equal to 4 characters']);
  });

  it('checks each element with each: true', async () => {
    expect(await problems('a', ['ab', 'c'])).toEqual([]);
    expect(await problems('a', ['ab', 'a\uFE0F\uFE0F'])).toEqual([
      'each value in tags must be shorter than or equal to 2 characters',
    ]);
  });
});
