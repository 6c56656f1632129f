import { ApiProperty } from '@nestjs/swagger';

/** POST /admin/resources/rescan (decisions.md §8): files in the index after the scan, and their total size. */
export class RescanResponse {
  @ApiProperty({ type: 'integer', description: 'Files under data/', example: 1200 })
  data!: number;

  @ApiProperty({ type: 'integer', description: 'Files under lang/', example: 14 })
  lang!: number;

  @ApiProperty({ type: 'integer', description: '.zip files under packs/', example: 3 })
  packs!: number;

  @ApiProperty({ type: 'integer', format: 'int64', description: 'Total size of those files in bytes', example: 734003200 })
  bytes!: number;
}
