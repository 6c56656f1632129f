import { IsInt, IsString } from 'class-validator';
import { BadRequestError } from '../errors/app-error';
import { DtoArrayPipe } from './dto-array.pipe';

class Item {
  @IsString()
  name!: string;

  @IsInt()
  size!: number;
}

async function refusal(promise: Promise<unknown>): Promise<BadRequestError> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(BadRequestError);
  return error as BadRequestError;
}

const message = async (promise: Promise<unknown>): Promise<string> => (await refusal(promise)).message;

describe('DtoArrayPipe', () => {
  const pipe = new DtoArrayPipe(Item, { maxItems: 3, unique: 'name' });

  it('gives the validated instances', async () => {
    const items = await pipe.transform([{ name: 'a', size: 1 }]);
    expect(items).toEqual([{ name: 'a', size: 1 }]);
    expect(items[0]).toBeInstanceOf(Item);
  });

  it('refuses a non-array and too many entries, with no field at fault', async () => {
    expect(await message(pipe.transform({}))).toBe('The request body must be a JSON array');
    expect((await refusal(pipe.transform([{}, {}, {}, {}]))).errors).toEqual([]);
    expect(await message(pipe.transform([{}, {}, {}, {}]))).toBe('At most 3 entries per request, got 4');
  });

  it('names every problem as a path under the index, a duplicate where its field stands', async () => {
    expect(await message(pipe.transform([{ name: 'a', size: 1 }, 'x', { name: 'a', size: 1.5, extra: true }]))).toBe(
      '[1] must be a JSON object; [2].extra: property extra should not exist; [2].name duplicates entry [0]; [2].size must be an integer number',
    );
  });

  it('lists the problems by index and field, in both wordings', async () => {
    const batch = [{ name: 'a', size: 1 }, 'x', { name: 'a', size: 1.5, extra: true }];
    const problems = [
      { index: 1, field: '', message: 'must be a JSON object' },
      { index: 2, field: 'extra', message: 'unknown field' },
      { index: 2, field: 'name', message: 'duplicates entry [0]' },
      { index: 2, field: 'size', message: 'must be an integer number' },
    ];
    expect((await refusal(pipe.transform(batch))).errors).toEqual(problems);
    const labelled = await refusal(
      new DtoArrayPipe(Item, { maxItems: 3, unique: 'name', wording: 'label' }).transform(batch),
    );
    expect(labelled.message).toBe(
      '[1] entry: must be a JSON object; [2] extra: unknown field; [2] name: duplicate of entry [0]; [2] size: must be an integer number',
    );
    expect(labelled.errors).toEqual([
      ...problems.slice(0, 2),
      { ...problems[2], message: 'duplicate of entry [0]' },
      problems[3],
    ]);
  });

  it('counts problems beyond the first 20', async () => {
    const many = new DtoArrayPipe(Item, { maxItems: 100 });
    const refused = await refusal(many.transform(Array.from({ length: 25 }, () => 'x')));
    expect(refused.message).toMatch(
      /^(\[\d+\] must be a JSON object; ){19}\[19\] must be a JSON object; … and 5 more$/,
    );
    expect(refused.errors).toEqual(
      Array.from({ length: 20 }, (_, index) => ({ index, field: '', message: 'must be a JSON object' })),
    );
  });
});
