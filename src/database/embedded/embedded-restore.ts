import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Client } from 'pg';
import { EmbeddedDatabase, EmbeddedDatabaseLockedError } from './embedded-database';

/** The data dir given to a restore is not empty: nothing was written. */
export class RestoreTargetNotEmptyError extends Error {}

/** The file is not a backup of the embedded database: nothing was left in the data dir. */
export class NotABackupError extends Error {}

/**
 * Turns a backup of the embedded database (POST /admin/database/backup: PGlite's gzipped tarball
 * of its data dir) into the data dir `dataDir`, which must be missing or empty: a restore never
 * mixes with or replaces a database (docs/operations.md "Backup and restore"). PGlite opens the
 * copy once (PostgreSQL's crash recovery replays the WAL the copy holds), answers a query and is
 * closed cleanly, so the service starts on a checked database. Answers the number of tables in
 * `public`.
 */
export async function restoreEmbeddedBackup(tarball: Uint8Array, dataDir: string): Promise<{ tables: number }> {
  const tar = dataDirTar(tarball);
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0)
    throw new RestoreTargetNotEmptyError(
      `${dataDir} is not empty: restore into a new, empty DATA_DIR (the restore never replaces a database)`,
    );
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  let embedded: EmbeddedDatabase;
  try {
    // In a worker thread, as the service runs it (PGlite cannot run inside Jest's VM either).
    embedded = await EmbeddedDatabase.start(dataDir, { maxConnections: 1, loadDataDir: tar });
  } catch (error) {
    if (error instanceof EmbeddedDatabaseLockedError) throw error;
    rmSync(join(dataDir, 'pgdata'), { recursive: true, force: true });
    throw new NotABackupError(
      `not a backup of the embedded database: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
    );
  }
  const client = new Client({ connectionString: embedded.url });
  try {
    await client.connect();
    const { rows } = await client.query<{ tables: number }>(
      `SELECT count(*)::int AS tables FROM pg_tables WHERE schemaname = 'public'`,
    );
    return { tables: rows[0].tables };
  } finally {
    await client.end().catch(() => undefined);
    await embedded.stop();
  }
}

/** The tar inside the gzip, when it is a tar of a PostgreSQL data dir (it holds PG_VERSION). */
function dataDirTar(tarball: Uint8Array): Buffer {
  let tar: Buffer;
  try {
    tar = gunzipSync(tarball);
  } catch {
    throw new NotABackupError('not a backup of the embedded database: not a gzip file');
  }
  // ustar headers: a 512-byte block each (name at 0, size in octal at 124, "ustar" at 257), then the data.
  for (let at = 0; at + 512 <= tar.length;) {
    const name = cString(tar, at, 100);
    if (name === '') break;
    if (tar.toString('latin1', at + 257, at + 262) !== 'ustar') break;
    if (name === 'PG_VERSION' || name.endsWith('/PG_VERSION')) return tar;
    const size = parseInt(cString(tar, at + 124, 12).trim() || '0', 8);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  throw new NotABackupError('not a backup of the embedded database: the archive holds no PostgreSQL data dir');
}

/** A NUL-terminated field of a tar header. */
function cString(tar: Buffer, at: number, length: number): string {
  const end = tar.indexOf(0, at);
  return tar.toString('latin1', at, end < 0 || end > at + length ? at + length : end);
}
