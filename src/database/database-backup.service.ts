import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ConflictError, UnavailableError } from '../common/errors/app-error';
import { EmbeddedDatabaseDownError } from './embedded/embedded-database';

/** How the running service takes a backup of its database: the embedded one's, or none (PostgreSQL). */
export const DATABASE_BACKUP_SOURCE = Symbol('DATABASE_BACKUP_SOURCE');
export type DatabaseBackupSource = (() => Promise<Uint8Array>) | null;

export interface DatabaseBackup {
  data: Buffer;
  sha256: string;
  takenAt: Date;
}

/**
 * Online backups of the embedded database (docs/operations.md "Backup and restore"). Only the
 * running service can take one: it alone holds the data dir. One at a time (each holds the whole
 * copy in memory and stalls statements while PGlite reads its files). On PostgreSQL there is
 * nothing to do here: pg_dump is the tool, and the answer says so.
 */
@Injectable()
export class DatabaseBackupService {
  private taking = false;

  constructor(@Inject(DATABASE_BACKUP_SOURCE) private readonly source: DatabaseBackupSource) {}

  async take(): Promise<DatabaseBackup> {
    if (this.source === null)
      throw new ConflictError(
        'The service runs on PostgreSQL (DATABASE_URL): back it up with pg_dump (docs/operations.md "Backup and restore")',
      );
    if (this.taking) throw new ConflictError('A backup is being taken; ask again when it is done');
    this.taking = true;
    try {
      const data = Buffer.from(await this.source());
      return { data, sha256: createHash('sha256').update(data).digest('hex'), takenAt: new Date() };
    } catch (error) {
      if (error instanceof EmbeddedDatabaseDownError)
        throw new UnavailableError(`No backup: ${error.message}`, { 'Retry-After': '5' });
      throw error;
    } finally {
      this.taking = false;
    }
  }
}
