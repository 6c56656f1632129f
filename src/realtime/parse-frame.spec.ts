import { BadRequestError } from '../common/errors/app-error';
import { ChatData, ResumeSessionData } from './dto/realtime.dto';
import { parseFrameData } from './parse-frame';

async function problem(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(BadRequestError);
  return (error as BadRequestError).message;
}

describe('parseFrameData', () => {
  it('gives the DTO with the uid as a string and unknown fields dropped', async () => {
    expect(await parseFrameData(ChatData, { uid: 42, message: 'hi', color: 'red' })).toEqual({
      uid: '42',
      message: 'hi',
    });
    expect(await parseFrameData(ResumeSessionData, { uid: '9007199254740993', accessToken: 't' })).toEqual({
      uid: '9007199254740993',
      accessToken: 't',
    });
  });

  it('answers the first problem in field order, once', async () => {
    expect(await problem(parseFrameData(ChatData, { uid: 0, message: '' }))).toBe('uid must be a positive integer');
    expect(await problem(parseFrameData(ChatData, { uid: 1, message: '   ' }))).toBe(
      'message must be a non-empty string of at most 256 characters',
    );
    expect(await problem(parseFrameData(ChatData, { uid: 1, message: 'x'.repeat(257) }))).toBe(
      'message must be a non-empty string of at most 256 characters',
    );
    expect(await problem(parseFrameData(ResumeSessionData, { uid: 2 ** 60 }))).toBe('uid must be a positive integer');
    expect(await problem(parseFrameData(ResumeSessionData, { uid: '7', accessToken: '' }))).toBe(
      'accessToken must be a non-empty string',
    );
  });

  it('reads only the DTO fields, and an object or array in a field as the wrong type it is', async () => {
    const wide = Object.fromEntries(Array.from({ length: 5_000 }, (_value, i) => [`k${i}`, i]));
    expect(await parseFrameData(ChatData, { ...wide, uid: 3, message: 'hi' })).toEqual({ uid: '3', message: 'hi' });
    expect(await problem(parseFrameData(ChatData, { uid: 3, message: Array(18_000).fill(1) }))).toBe(
      'message must be a non-empty string of at most 256 characters',
    );
    expect(await problem(parseFrameData(ChatData, { uid: { a: 1 }, message: 'hi' }))).toBe(
      'uid must be a positive integer',
    );
    expect(await problem(parseFrameData(ResumeSessionData, { uid: 1, accessToken: ['t'] }))).toBe(
      'accessToken must be a non-empty string',
    );
  });
});
