import { Controller, HttpCode, Post, Res, StreamableFile } from '@nestjs/common';
import type { Response } from 'express';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminAuth, Permission } from '../auth/auth.decorators';
import { Audited } from '../audit/audited.decorator';
import { ApiErrors } from '../common/decorators/api-errors.decorator';
import { DatabaseBackupService } from '../database/database-backup.service';
import { API_TAGS } from '../openapi/api-tags';

/** The answer of a backup: the tarball, and what the audit row records of it. */
class BackupFile extends StreamableFile {
  readonly bytes: number;

  constructor(
    data: Buffer,
    readonly sha256: string,
    takenAt: Date,
  ) {
    const stamp = takenAt.toISOString().replace(/[:.]/g, '-');
    super(data, {
      type: 'application/gzip',
      disposition: `attachment; filename="rhythmc-embedded-${stamp}.tar.gz"`,
      length: data.length,
    });
    this.bytes = data.length;
  }
}

@ApiTags(API_TAGS.admin)
@Controller('admin/database')
@AdminAuth()
export class DatabaseBackupController {
  constructor(private readonly backups: DatabaseBackupService) {}

  /** A consistent copy of the embedded database while the service serves (docs/operations.md "Backup and restore"). */
  @Post('backup')
  @Permission('database.backup')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Back up the embedded database',
    description:
      'The data dir of the embedded database as a gzipped tarball, taken between two statements while the service serves; ' +
      '`npm run database -- restore <file>` turns it into a new data dir. No body. On PostgreSQL (DATABASE_URL): 409, use pg_dump.',
  })
  @ApiOkResponse({
    description: 'The backup (Content-Disposition names it; X-Backup-SHA256 is its SHA-256)',
    content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
  })
  @ApiErrors({
    409: {
      description: 'CONFLICT: the service runs on PostgreSQL (use pg_dump), or another backup is being taken',
      code: 'CONFLICT',
      message: 'A backup is being taken; ask again when it is done',
    },
  })
  @Audited(
    'database.backup',
    () => 'database',
    ({ result }) => ({ bytes: (result as BackupFile).bytes, sha256: (result as BackupFile).sha256 }),
  )
  async backup(@Res({ passthrough: true }) response: Response): Promise<BackupFile> {
    const backup = await this.backups.take();
    response.setHeader('X-Backup-SHA256', backup.sha256);
    response.setHeader('Cache-Control', 'no-store');
    return new BackupFile(backup.data, backup.sha256, backup.takenAt);
  }
}
