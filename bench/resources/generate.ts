import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface GeneratedTree {
  files: number;
  bytes: number;
}

/**
 * Writes a RESOURCE_DIR of `count` files shaped like a real one: 2 % language files, 10 packs of
 * 1 MiB, the rest song data (chart JSON of 1-8 KiB and a few larger audio-like files), 100
 * files per song folder.
 */
export function generateResourceTree(root: string, count: number): GeneratedTree {
  let bytes = 0;
  const write = (path: string, size: number) => {
    const absolute = join(root, path);
    mkdirSync(join(absolute, '..'), { recursive: true });
    writeFileSync(absolute, randomBytes(size));
    bytes += size;
  };
  const packs = 10;
  const lang = Math.floor(count * 0.02);
  for (let i = 0; i < packs; i++) write(`packs/pack-${i}.zip`, 1024 * 1024);
  for (let i = 0; i < lang; i++) write(`lang/${String(i % 40).padStart(2, '0')}/strings-${i}.json`, 512 + (i % 4) * 512);
  for (let i = 0; i < count - packs - lang; i++) {
    const size = i % 50 === 0 ? 64 * 1024 : 1024 + (i % 8) * 1024;
    write(`data/songs/${Math.floor(i / 100)}/file-${i}.${i % 50 === 0 ? 'ogg' : 'json'}`, size);
  }
  return { files: count, bytes };
}

if (require.main === module) {
  const [root, count = '20000'] = process.argv.slice(2);
  if (!root) {
    console.error('usage: ts-node bench/resources/generate.ts <dir> [count]');
    process.exit(1);
  }
  console.log(generateResourceTree(root, Number(count)));
}
