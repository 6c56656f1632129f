import { IsInt, IsString } from 'class-validator';
import { BadRequestError } from '../errors/app-error';
import { DtoArrayPipe } from './dto-array.pipe';

class Item {
  @IsString()
  name!: string;

  @IsInt()
  size!: number;
}

async function message(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(BadRequestError);
  return (error as BadRequestError).message;
}

describe('DtoArrayPipe', () => {
  const pipe = new DtoArrayPipe(Item, { maxItems: 3, unique: 'name' });

  it('gives the validated instances', async () => {
    const items = await pipe.transform([{ name: 'a', size: 1 }]);
    expect(items).toEqual([{ name: 'a', size: 1 }]);
    expect(items[0]).toBeInstanceOf(Item);
  });

  it('refuses a non-array and too many entries', async () => {
    expect(await message(pipe.transform({}))).toBe('The request body must be a JSON array');
    expect(await message(pipe.transform([{}, {}, {}, {}]))).toBe('At most 3 entries per request, got 4');
  });

  it('names every problem as a path under the index, a duplicate where its field stands', async () => {
    expect(await message(pipe.transform([{ name: 'a', size: 1 }, 'x', { name: 'a', size: 1.5, extra: true }]))).toBe(
      '[1] must be a JSON object; [2].extra: property extra should not exist; [2].name duplicates entry [0]; [2].size must be an integer number',
    );
  });

  it('counts problems beyond the first 20', async () => {
    const many = new DtoArrayPipe(Item, { maxItems: 100 });
    expect(await message(many.transform(Array.from({ length: 25 }, () => 'x')))).toMatch(
      /^(\[\d+\] must be a JSON object; ){19}\[19\] must be a JSON object; … and 5 more$/,
    );
  });
});
