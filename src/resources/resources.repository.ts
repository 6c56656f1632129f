import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ResourcePackEntity } from './entities/resource-pack.entity';
import type { ResourceKind } from './resource-paths';

/** What the index knows of a file, to decide whether it must be hashed again. */
export interface IndexedState {
  kind: ResourceKind;
  size: number;
  mtimeNs: bigint;
  hasSha1: boolean;
}

/** A file of the index: what a rescan writes and what the routes read back. */
export interface IndexedFile {
  path: string;
  kind: ResourceKind;
  size: number;
  mtimeNs: bigint;
  sha256: string;
  sha1: string | null;
}

export interface IndexTotals {
  data: number;
  lang: number;
  packs: number;
  bytes: number;
}

export interface ManifestRow {
  path: string;
  kind: ResourceKind;
  sha256: string;
}

export interface PackRow {
  name: string;
  displayName: string;
  type: ResourcePackEntity['type'];
  availableSongs: number[];
  file: string;
  /** Null when the pack's file is not (or no longer) in the index. */
  size: number | null;
  sha1: string | null;
}

export type NewPack = Pick<ResourcePackEntity, 'name' | 'displayName' | 'type' | 'availableSongs' | 'file'>;

/** Rows per INSERT/DELETE of a rescan: bounded statements, few round trips. */
const WRITE_CHUNK = 5_000;

interface RawFileRow {
  path: string;
  kind: ResourceKind;
  size: string;
  mtime_ns: string;
  sha256: string;
  sha1: string | null;
}

function toIndexedFile(row: RawFileRow): IndexedFile {
  return { path: row.path, kind: row.kind, size: Number(row.size), mtimeNs: BigInt(row.mtime_ns), sha256: row.sha256, sha1: row.sha1 };
}

/**
 * The resource index (resource_file and its version in resource_index_state), the pack descriptions (resource_pack) and the link-signing
 * key (resource_signing_key). Bulk paths use plain SQL with array parameters: a 20,000-file index
 * is written in a handful of statements instead of 20,000.
 */
@Injectable()
export class ResourcesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private manager(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

  async loadIndexState(): Promise<Map<string, IndexedState>> {
    const rows = await this.manager().query<Array<{ path: string; kind: ResourceKind; size: string; mtime_ns: string; has_sha1: boolean }>>(
      'SELECT path, kind, size, mtime_ns, sha1 IS NOT NULL AS has_sha1 FROM resource_file',
    );
    return new Map(rows.map((row) => [row.path, { kind: row.kind, size: Number(row.size), mtimeNs: BigInt(row.mtime_ns), hasSha1: row.has_sha1 }]));
  }

  /** Inserts or refreshes the hashed files and removes the vanished ones; `hashed_at` becomes now(). */
  async applyScan(hashed: IndexedFile[], removedPaths: string[], manager: EntityManager): Promise<void> {
    for (let offset = 0; offset < hashed.length; offset += WRITE_CHUNK) {
      const chunk = hashed.slice(offset, offset + WRITE_CHUNK);
      await manager.query(
        `INSERT INTO resource_file (path, kind, size, mtime_ns, sha256, sha1, hashed_at)
         SELECT path, kind, size, mtime_ns, sha256, sha1, now()
         FROM unnest($1::varchar[], $2::varchar[], $3::bigint[], $4::bigint[], $5::char(64)[], $6::char(40)[])
           AS incoming(path, kind, size, mtime_ns, sha256, sha1)
         ON CONFLICT (path) DO UPDATE SET
           kind = EXCLUDED.kind, size = EXCLUDED.size, mtime_ns = EXCLUDED.mtime_ns,
           sha256 = EXCLUDED.sha256, sha1 = EXCLUDED.sha1, hashed_at = EXCLUDED.hashed_at`,
        [
          chunk.map((file) => file.path),
          chunk.map((file) => file.kind),
          chunk.map((file) => String(file.size)),
          chunk.map((file) => file.mtimeNs.toString()),
          chunk.map((file) => file.sha256),
          chunk.map((file) => file.sha1),
        ],
      );
    }
    for (let offset = 0; offset < removedPaths.length; offset += WRITE_CHUNK) {
      await manager.query('DELETE FROM resource_file WHERE path = ANY($1::varchar[])', [removedPaths.slice(offset, offset + WRITE_CHUNK)]);
    }
    await manager.query(
      `INSERT INTO resource_index_state (id, version, changed_at) VALUES (1, 1, now())
       ON CONFLICT (id) DO UPDATE SET version = resource_index_state.version + 1, changed_at = now()`,
    );
  }

  /** The index version: bumped by every scan that changed the index ("0" before the first). */
  async indexVersion(): Promise<string> {
    const [row] = await this.manager().query<Array<{ version: string }>>('SELECT version FROM resource_index_state WHERE id = 1');
    return row?.version ?? '0';
  }

  async totals(): Promise<IndexTotals> {
    const [row] = await this.manager().query<Array<{ data: number; lang: number; packs: number; bytes: string }>>(
      `SELECT count(*) FILTER (WHERE kind = 'data')::int AS data,
              count(*) FILTER (WHERE kind = 'lang')::int AS lang,
              count(*) FILTER (WHERE kind = 'pack')::int AS packs,
              coalesce(sum(size), 0)::text AS bytes
       FROM resource_file`,
    );
    return { data: row.data, lang: row.lang, packs: row.packs, bytes: Number(row.bytes) };
  }

  /** Manifest entries of the given kinds, in byte order of path (the column's collation is "C"). */
  listManifest(kinds: ResourceKind[]): Promise<ManifestRow[]> {
    return this.manager().query<ManifestRow[]>('SELECT path, kind, sha256 FROM resource_file WHERE kind = ANY($1::varchar[]) ORDER BY path', [kinds]);
  }

  async findFiles(paths: string[], kinds: ResourceKind[], manager?: EntityManager): Promise<IndexedFile[]> {
    const rows = await this.manager(manager).query<RawFileRow[]>(
      'SELECT path, kind, size, mtime_ns, sha256, sha1 FROM resource_file WHERE path = ANY($1::varchar[]) AND kind = ANY($2::varchar[])',
      [paths, kinds],
    );
    return rows.map(toIndexedFile);
  }

  async findFile(path: string): Promise<IndexedFile | null> {
    const [row] = await this.findFiles([path], ['data', 'lang', 'pack']);
    return row ?? null;
  }

  /** The target of a pack link: the indexed file, and whether a described pack still names it (one query). */
  async findPackFile(path: string): Promise<(IndexedFile & { described: boolean }) | null> {
    const [row] = await this.manager().query<Array<RawFileRow & { described: boolean }>>(
      `SELECT f.path, f.kind, f.size, f.mtime_ns, f.sha256, f.sha1,
              EXISTS (SELECT 1 FROM resource_pack p WHERE p.file = f.path) AS described
       FROM resource_file f WHERE f.path = $1`,
      [path],
    );
    return row ? { ...toIndexedFile(row), described: row.described } : null;
  }

  async upsertPacks(packs: NewPack[], manager: EntityManager): Promise<void> {
    if (packs.length === 0) return;
    await manager
      .getRepository(ResourcePackEntity)
      .upsert(packs.map((pack) => ({ ...pack, updatedAt: new Date() })), { conflictPaths: ['name'], skipUpdateIfNoValuesChanged: false });
  }

  async deletePack(name: string): Promise<boolean> {
    const result = await this.manager().getRepository(ResourcePackEntity).delete({ name });
    return (result.affected ?? 0) > 0;
  }

  /** Every described pack with its indexed file's size and SHA-1, by name (byte order). */
  async listPacks(): Promise<PackRow[]> {
    const rows = await this.manager().query<
      Array<{ name: string; display_name: string; type: PackRow['type']; available_songs: number[]; file: string; size: string | null; sha1: string | null }>
    >(
      `SELECT p.name, p.display_name, p.type, p.available_songs, p.file, f.size, f.sha1
       FROM resource_pack p
       LEFT JOIN resource_file f ON f.path = p.file AND f.kind = 'pack'
       ORDER BY p.name`,
    );
    return rows.map((row) => ({
      name: row.name,
      displayName: row.display_name,
      type: row.type,
      availableSongs: row.available_songs,
      file: row.file,
      size: row.size === null ? null : Number(row.size),
      sha1: row.sha1,
    }));
  }

  /**
   * The link-signing key: the stored one, or `candidate` stored now. Instances starting together
   * race on the insert; ON CONFLICT makes every one of them read the same winner.
   */
  async getOrCreateSigningKey(candidate: string): Promise<string> {
    await this.manager().query('INSERT INTO resource_signing_key (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [candidate]);
    const [row] = await this.manager().query<Array<{ secret: string }>>('SELECT secret FROM resource_signing_key WHERE id = 1');
    return row.secret;
  }
}
