import { IsIn, IsOptional } from 'class-validator';

export class ManifestQueryDto {
  /** interface.md: include language resources; anything but `true`/`false` is 400. */
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'lang must be true or false' })
  lang?: 'true' | 'false';
}

/** interface.md "Resource manifest entry". */
export class ManifestEntry {
  path!: string;
  sha256!: string;
}

export class ManifestResponse {
  Data!: ManifestEntry[];
  Lang!: ManifestEntry[];
}
