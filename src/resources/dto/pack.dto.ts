import { ArrayMaxSize, IsArray, IsIn, IsInt, IsNotEmpty, IsString, Max, MaxLength, Min } from 'class-validator';
import { PACK_TYPES, PackType } from '../entities/resource-pack.entity';
import { MAX_PACK_NAME_LENGTH } from '../pipes/pack-name.pipe';

/** One entry of PUT /admin/packs (decisions.md §8). */
export class PackDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_PACK_NAME_LENGTH)
  name!: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  displayName!: string;

  @IsIn(PACK_TYPES, { message: `type must be one of ${PACK_TYPES.join(', ')}` })
  type!: PackType;

  @IsArray()
  @ArrayMaxSize(100_000)
  @IsInt({ each: true, message: 'availableSongs must contain only integers' })
  @Min(0, { each: true, message: 'availableSongs must contain only ids of 0 or more' })
  @Max(2_147_483_647, { each: true, message: 'availableSongs must contain only ids up to 2147483647' })
  availableSongs!: number[];

  /** A `.zip` directly under `packs/`, present in the index. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  file!: string;
}

export class UpsertedResponse {
  upserted!: number;
}

/** interface.md "Resource-pack entry". */
export class PackManifestEntry {
  name!: string;
  displayName!: string;
  type!: PackType;
  availableSongs!: number[];
  size!: number;
  sha1!: string;
  url!: string;
}
