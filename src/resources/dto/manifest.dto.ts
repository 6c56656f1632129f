import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';

export class ManifestQueryDto {
  /** interface.md: include language resources; anything but `true`/`false` is 400. */
  @ApiPropertyOptional({ enum: ['true', 'false'], description: 'Include the language resources (Lang is [] otherwise)', default: 'false' })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'lang must be true or false' })
  lang?: 'true' | 'false';
}

/** interface.md "Resource manifest entry". */
export class ManifestEntry {
  @ApiProperty({ type: String, description: 'Path relative to RESOURCE_DIR, with / separators', example: 'data/songs/12/chart.json' })
  path!: string;

  @ApiProperty({ type: String, pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the file, lower-case hex', example: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9' })
  sha256!: string;
}

export class ManifestResponse {
  @ApiProperty({ type: [ManifestEntry], description: 'Every file under RESOURCE_DIR/data' })
  Data!: ManifestEntry[];

  @ApiProperty({ type: [ManifestEntry], description: 'Every file under RESOURCE_DIR/lang with lang=true; [] otherwise' })
  Lang!: ManifestEntry[];
}
