import { ApiProperty } from '@nestjs/swagger';

/** interface.md "Download info entry". */
export class DownloadEntry {
  @ApiProperty({ type: String, example: 'data/songs/12/chart.json' })
  path!: string;

  @ApiProperty({
    type: String,
    description: 'CDN_BASE_URL/path, or a link to GET /resources/files/{path} signed with an expiry; never carries a token',
    example: 'https://rhythmc.example.org/resources/files/data/songs/12/chart.json?expires=1774003600&sig=3q2-7wT0bYpQ1cG0mN8rVfJ5sK2xL9aE4dH6uZ1oWiA',
  })
  url!: string;

  @ApiProperty({ type: 'integer', format: 'int64', description: 'File size in bytes', example: 52311 })
  bytes!: number;

  @ApiProperty({ type: String, pattern: '^[0-9a-f]{64}$', example: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9' })
  sha256!: string;
}
