import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { needsHashing } from './resource-index.service';
import { hashFile, listResourceFiles, mapLimit } from './resource-scanner';

describe('resource scanner', () => {
  let root: string;
  const write = (path: string, content: Buffer | string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'rhythmc-scanner-'));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('lists data/**, lang/** and packs/*.zip with sizes, and nothing else', async () => {
    write('data/a/b/c.json', 'abc');
    write('lang/en.json', '{}');
    write('packs/full.zip', 'zip!');
    write('packs/nested/inner.zip', 'no');
    write('packs/readme.md', 'no');
    write('other/x', 'no');
    write('top.json', 'no');
    write('data/.DS_Store', 'no');
    write('data/.cache/x.json', 'no');
    write('data/back\\slash.json', 'no');
    symlinkSync(join(root, 'other/x'), join(root, 'data/link'));
    symlinkSync(join(root, 'other'), join(root, 'data/dir-link'));

    const { files, skipped } = await listResourceFiles(root);
    expect(files.map(({ path, kind, size }) => ({ path, kind, size })).sort((x, y) => x.path.localeCompare(y.path))).toEqual([
      { path: 'data/a/b/c.json', kind: 'data', size: 3 },
      { path: 'lang/en.json', kind: 'lang', size: 2 },
      { path: 'packs/full.zip', kind: 'pack', size: 4 },
    ]);
    expect(typeof files[0].mtimeNs).toBe('bigint');
    expect(skipped).toEqual([{ path: 'data/back\\slash.json', reason: 'path must use "/" separators (no backslash)' }]);
  });

  it('does not follow data/, lang/ or packs/ given as a symbolic link, and says so', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'rhythmc-scanner-outside-'));
    try {
      mkdirSync(join(outside, 'sub'), { recursive: true });
      writeFileSync(join(outside, 'sub/x.json'), 'outside');
      writeFileSync(join(outside, 'p.zip'), 'outside');
      write('data/kept.json', 'in');
      symlinkSync(outside, join(root, 'lang'));
      symlinkSync(outside, join(root, 'packs'));
      const { files, skipped } = await listResourceFiles(root);
      expect(files.map(({ path }) => path)).toEqual(['data/kept.json']);
      expect(skipped.sort((x, y) => x.path.localeCompare(y.path))).toEqual([
        { path: 'lang', reason: 'a symbolic link (not followed)' },
        { path: 'packs', reason: 'a symbolic link (not followed)' },
      ]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('treats a missing folder as empty', async () => {
    expect(await listResourceFiles(join(root, 'missing'))).toEqual({ files: [], skipped: [] });
  });

  it('hashes a file larger than one read chunk exactly', async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    write('data/big.bin', bytes);
    expect(await hashFile(join(root, 'data/big.bin'), true)).toEqual({
      sha256: createHash('sha256').update(bytes).digest('hex'),
      sha1: createHash('sha1').update(bytes).digest('hex'),
    });
    expect((await hashFile(join(root, 'data/big.bin'), false))?.sha1).toBeNull();
  });

  it('answers null for a file that is gone', async () => {
    expect(await hashFile(join(root, 'data/gone.bin'), false)).toBeNull();
  });

  it('maps with bounded concurrency and keeps the order', async () => {
    let running = 0;
    let peak = 0;
    const result = await mapLimit([5, 1, 4, 2, 3, 0], 2, async (n) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, n));
      running--;
      return n * 10;
    });
    expect(result).toEqual([50, 10, 40, 20, 30, 0]);
    expect(peak).toBe(2);
  });
});

describe('needsHashing', () => {
  const file = { path: 'data/x', kind: 'data' as const, size: 10, mtimeNs: 1_000n };
  const known = { kind: 'data' as const, size: 10, mtimeNs: 1_000n, hasSha1: false };

  it('is false for an unchanged file', () => {
    expect(needsHashing(file, known)).toBe(false);
  });

  it.each([
    ['a new file', file, undefined],
    ['another size', file, { ...known, size: 11 }],
    ['another mtime', file, { ...known, mtimeNs: 1_001n }],
    ['a pack without SHA-1', { ...file, path: 'packs/x.zip', kind: 'pack' as const }, { ...known, kind: 'pack' as const }],
  ])('is true for %s', (_label, found, stored) => {
    expect(needsHashing(found, stored)).toBe(true);
  });
});
