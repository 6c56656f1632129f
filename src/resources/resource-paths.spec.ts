import { encodeResourcePath, resourceKindOf, resourcePathProblem } from './resource-paths';

describe('resource paths', () => {
  it.each(['data/songs/1/chart.json', 'lang/en_us.json', 'packs/full.zip', 'data/a..b/c', 'data/.../x', 'data/ümlaut & co.png'])('accepts %j', (path) => {
    expect(resourcePathProblem(path)).toBeNull();
  });

  it.each([
    ['', 'must not be empty'],
    ['..', 'must not contain a ".." segment'],
    ['data/../x', 'must not contain a ".." segment'],
    ['data/x/..', 'must not contain a ".." segment'],
    ['/data/x', 'must be relative (no leading "/")'],
    ['data\\x', 'must use "/" separators (no backslash)'],
    ['data/a\nb', 'must not contain control characters'],
    ['data/a\u0000b', 'must not contain control characters'],
    [`data/${'x'.repeat(1020)}`, 'must be at most 1024 characters'],
  ])('refuses %j: %s', (path, problem) => {
    expect(resourcePathProblem(path)).toBe(problem);
  });

  it.each([
    ['data/songs/1/chart.json', 'data'],
    ['lang/de/de_de.json', 'lang'],
    ['packs/full.zip', 'pack'],
    ['packs/FULL.ZIP', 'pack'],
    ['packs/nested/x.zip', null],
    ['packs/readme.txt', null],
    ['other/x', null],
    ['datax/y', null],
  ])('files %j under %s', (path, kind) => {
    expect(resourceKindOf(path)).toBe(kind);
  });

  it('percent-encodes each segment and keeps the separators', () => {
    expect(encodeResourcePath('data/icon set/ü&?#.png')).toBe('data/icon%20set/%C3%BC%26%3F%23.png');
  });
});
