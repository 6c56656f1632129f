import { randomBytes } from 'node:crypto';
import { FileHandle, open, readdir, rename, rm } from 'node:fs/promises';
import { endianness } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { bufferWords, FULL_WORDS } from './compact-block';
import { CompactKeySet } from './compact-key-set';
import { repacked } from './compact-key-set-builder';
import { OrderStatisticSet } from './order-statistic-set';
import { CHART_KEY_CODEC, SITE_KEY_CODEC } from './rank-key-codec';
import { RankKeySet } from './rank-key-set';

/**
 * The in-process rank index on disk: every order's compact blocks as they are in memory (header
 * and packed keys) and wide keys (Float64 triples), then a JSON footer that says what they are,
 * where they come from (database, last migration, change watermark) and their CRC-32, then the
 * footer's length and a magic.
 * Written to a temporary file and renamed over the old one, so a reader sees a whole snapshot or
 * the previous one. Anything unexpected on reading (another format, codec, database or byte order,
 * a wrong length or checksum) makes read return a reason instead of sets: the caller rebuilds.
 */
const MAGIC = 'RKIX';
const FORMAT = 'rhythmc-rank-index';
/**
 * 3: bit-packed blocks (compact-key-set.ts), read straight into their buffers. An older snapshot
 * (2: blocks of ≤ 512 unpacked keys; 1: of ≤ 1,024) is refused and the start loads the tables.
 */
const VERSION = 3;
const CHUNK = 4 << 20;

/** Where a snapshot comes from; a snapshot is used only on the database and schema it was taken from. */
export interface SnapshotIdentity {
  /** The database's oid and name. */
  database: string;
  /** The last migration applied. */
  migration: string;
}

export interface RankIndexSnapshot {
  identity: SnapshotIdentity;
  /** rank_change_seq when it was taken: every later change of a rating row has a larger change_seq. */
  watermark: string;
  site: RankKeySet;
  tracks: Map<number, RankKeySet>;
}

interface Footer {
  format: string;
  version: number;
  codecs: [string, string];
  endianness: string;
  identity: SnapshotIdentity;
  watermark: string;
  /**
   * Per order (site first, level null): the keys of each compact block, the words each takes (its
   * header and packed keys), the number of wide keys.
   */
  sets: Array<{ levelId: number | null; blocks: number[]; words: number[]; wide: number }>;
  bodyBytes: number;
  crc: number;
}

/**
 * Writes the snapshot atomically: a temporary file of its own name (pid and random: in a container
 * every process is pid 1), fsync, rename, fsync of the directory so that the rename survives a
 * power loss. Temporary files a crash left behind (100+ MiB at a million players) are removed
 * first: only the instance holding the writer lock writes snapshots. `repack` writes each order
 * packed afresh (CompactKeySet.repacked: what the service does at shutdown) instead of its blocks
 * as they are.
 */
export async function writeRankIndexSnapshot(
  path: string,
  snapshot: RankIndexSnapshot,
  { repack = false }: { repack?: boolean } = {},
): Promise<number> {
  await removeLeftovers(path);
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const file = await open(temporary, 'w');
  try {
    const chunk = Buffer.allocUnsafe(CHUNK);
    let used = 0;
    let crc = 0;
    let bodyBytes = 0;
    const put = async (bytes: Uint8Array) => {
      crc = crc32(bytes, crc);
      bodyBytes += bytes.byteLength;
      for (let at = 0; at < bytes.byteLength;) {
        const length = Math.min(bytes.byteLength - at, CHUNK - used);
        chunk.set(bytes.subarray(at, at + length), used);
        used += length;
        at += length;
        if (used === CHUNK) {
          await file.write(chunk, 0, used);
          used = 0;
        }
      }
    };
    const sets: Footer['sets'] = [];
    const orders: Array<[number | null, RankKeySet]> = [
      [null, snapshot.site],
      ...[...snapshot.tracks.entries()].sort((x, y) => x[0] - y[0]),
    ];
    for (const [levelId, set] of orders) {
      const { compact, wide } = set.parts();
      const blocks: number[] = [];
      const words: number[] = [];
      // Repacked, the blocks go back to a load's density (a set at a time, ~0.15 s a million keys).
      for (const [count, block] of (repack ? repacked(compact) : compact).packedBlocks()) {
        blocks.push(count);
        words.push(block.length);
        await put(new Uint8Array(block.buffer, block.byteOffset, block.byteLength));
      }
      if (wide.size > 0) {
        const triples = Float64Array.from([...wide.keys()].flat());
        await put(new Uint8Array(triples.buffer));
      }
      sets.push({ levelId, blocks, words, wide: wide.size });
    }
    const footer: Footer = {
      format: FORMAT,
      version: VERSION,
      codecs: [SITE_KEY_CODEC.name, CHART_KEY_CODEC.name],
      endianness: endianness(),
      identity: snapshot.identity,
      watermark: snapshot.watermark,
      sets,
      bodyBytes,
      crc,
    };
    const footerBytes = Buffer.from(JSON.stringify(footer));
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(footerBytes.byteLength, 0);
    trailer.write(MAGIC, 4, 'latin1');
    await file.write(chunk, 0, used);
    await file.write(footerBytes);
    await file.write(trailer);
    await file.sync();
    await file.close();
    await rename(temporary, path);
    await syncDirectory(dirname(path));
    return bodyBytes + footerBytes.byteLength + trailer.byteLength;
  } catch (error) {
    await file.close().catch(() => undefined);
    await rm(temporary, { force: true });
    throw error;
  }
}

/** Removes `<snapshot>.*.tmp` files an interrupted write left in the snapshot's directory. */
async function removeLeftovers(path: string): Promise<void> {
  const prefix = `${basename(path)}.`;
  const names = await readdir(dirname(path)).catch(() => [] as string[]);
  for (const name of names)
    if (name.startsWith(prefix) && name.endsWith('.tmp')) await rm(join(dirname(path), name), { force: true });
}

/** fsync of a directory (its entries: the rename); skipped where the platform refuses it. */
async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r').catch(() => null);
  if (!handle) return;
  try {
    await handle.sync().catch(() => undefined);
  } finally {
    await handle.close();
  }
}

/** A snapshot whose footer matched: its watermark, and its keys to read. */
export interface OpenedSnapshot {
  watermark: string;
  /** Reads the keys (or says why they cannot be used) and closes the file. */
  read(): Promise<Pick<RankIndexSnapshot, 'site' | 'tracks'> | string>;
}

/**
 * Opens a snapshot taken on `identity`'s database and schema and checks its footer; a string says
 * why it cannot be used (missing, another format or database, truncated). The keys are read by
 * read(), in chunks straight into the blocks (no second copy of the file in memory), so the caller
 * can run its queries meanwhile.
 */
export async function openRankIndexSnapshot(
  path: string,
  identity: SnapshotIdentity,
): Promise<OpenedSnapshot | string> {
  let file: FileHandle;
  try {
    file = await open(path, 'r');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no snapshot' : `unreadable (${String(error)})`;
  }
  const readAt = async (bytes: Uint8Array, position: number) => {
    for (let at = 0; at < bytes.byteLength;) {
      const { bytesRead } = await file.read(bytes, at, bytes.byteLength - at, position + at);
      if (bytesRead === 0) throw new Error('unexpected end of file');
      at += bytesRead;
    }
  };
  let footer: Footer;
  try {
    const size = (await file.stat()).size;
    if (size < 8) throw new Unusable('truncated');
    const trailer = Buffer.alloc(8);
    await readAt(trailer, size - 8);
    if (trailer.toString('latin1', 4, 8) !== MAGIC) throw new Unusable('not a rank index snapshot');
    const footerLength = trailer.readUInt32LE(0);
    if (footerLength > size - 8) throw new Unusable('truncated');
    const footerBytes = Buffer.alloc(footerLength);
    await readAt(footerBytes, size - 8 - footerLength);
    try {
      footer = JSON.parse(footerBytes.toString('utf8')) as Footer;
    } catch {
      throw new Unusable('damaged footer');
    }
    if (footer.format !== FORMAT || footer.version !== VERSION)
      throw new Unusable(`format ${footer.format} ${footer.version}`);
    if (footer.codecs?.[0] !== SITE_KEY_CODEC.name || footer.codecs[1] !== CHART_KEY_CODEC.name)
      throw new Unusable('other codecs');
    if (footer.endianness !== endianness()) throw new Unusable('other byte order');
    if (footer.identity?.database !== identity.database) throw new Unusable('taken on another database');
    if (footer.identity.migration !== identity.migration) throw new Unusable('taken before a migration');
    if (footer.bodyBytes !== size - 8 - footerLength || !/^\d+$/.test(footer.watermark))
      throw new Unusable('truncated');
  } catch (error) {
    await file.close();
    if (error instanceof Unusable) return error.message;
    return `unreadable (${error instanceof Error ? error.message : String(error)})`;
  }
  return {
    watermark: footer.watermark,
    read: async () => {
      try {
        return await readBody(file, footer);
      } catch (error) {
        return `unreadable (${error instanceof Error ? error.message : String(error)})`;
      } finally {
        await file.close();
      }
    },
  };
}

class Unusable extends Error {}

/** The sets of a snapshot whose footer matched, read in chunks of CHUNK bytes. */
async function readBody(
  file: FileHandle,
  footer: Footer,
): Promise<Pick<RankIndexSnapshot, 'site' | 'tracks'> | string> {
  const chunk = Buffer.allocUnsafe(CHUNK);
  let chunkStart = 0;
  let chunkEnd = 0;
  let position = 0;
  let crc = 0;
  /** Fills `target` with the next bytes of the body. */
  const fill = async (target: Uint8Array) => {
    for (let at = 0; at < target.byteLength;) {
      if (position === chunkEnd) {
        const { bytesRead } = await file.read(chunk, 0, Math.min(CHUNK, footer.bodyBytes - position), position);
        if (bytesRead === 0) throw new Error('unexpected end of file');
        chunkStart = position;
        chunkEnd = position + bytesRead;
      }
      const length = Math.min(target.byteLength - at, chunkEnd - position);
      target.set(chunk.subarray(position - chunkStart, position - chunkStart + length), at);
      at += length;
      position += length;
    }
    crc = crc32(target, crc);
  };
  /** Each block's words straight into a buffer of the size the set gives a block of that many. */
  const readPacked = async (entry: Footer['sets'][number]): Promise<CompactKeySet | string> => {
    const blocks: Uint32Array[] = [];
    const { words } = entry;
    if (!Array.isArray(words) || words.length !== entry.blocks.length) return 'damaged block list';
    for (const length of words) {
      if (!Number.isInteger(length) || length <= 0 || length > FULL_WORDS) return 'damaged block list';
      if (position + length * 4 > footer.bodyBytes) return 'damaged block list';
      const block = new Uint32Array(bufferWords(length));
      await fill(new Uint8Array(block.buffer, 0, length * 4));
      blocks.push(block);
    }
    return CompactKeySet.fromPacked(blocks, entry.blocks);
  };
  let site: RankKeySet | null = null;
  const tracks = new Map<number, RankKeySet>();
  for (const entry of footer.sets) {
    const compact = await readPacked(entry);
    if (typeof compact === 'string') return compact;
    const wide = new OrderStatisticSet();
    if (entry.wide > 0) {
      if (!Number.isInteger(entry.wide) || position + entry.wide * 24 > footer.bodyBytes) return 'damaged block list';
      const triples = new Float64Array(entry.wide * 3);
      await fill(new Uint8Array(triples.buffer));
      for (let i = 0; i < triples.length; i += 3) wide.insert(triples[i], triples[i + 1], triples[i + 2]);
    }
    if (entry.levelId === null) site = new RankKeySet(SITE_KEY_CODEC, compact, wide);
    else tracks.set(entry.levelId, new RankKeySet(CHART_KEY_CODEC, compact, wide));
  }
  if (position !== footer.bodyBytes || crc !== footer.crc) return 'checksum mismatch';
  if (site === null) return 'no site order';
  return { site, tracks };
}
