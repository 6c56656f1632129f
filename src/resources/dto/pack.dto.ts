import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsNotEmpty, IsString, Max, Min } from 'class-validator';
import { PACK_TYPES, PackType } from '../entities/resource-pack.entity';
import { MAX_PACK_NAME_LENGTH } from '../pipes/pack-name.pipe';
import { IsText } from '../../common/validation/is-text';

/** One entry of PUT /admin/packs (decisions.md §8). */
export class PackDto {
  @ApiProperty({ type: String, minLength: 1, maxLength: 128, description: 'Unique pack name (unique within the batch too)', example: 'chapter-1' })
  @IsString()
  @IsNotEmpty()
  @IsText(MAX_PACK_NAME_LENGTH)
  name!: string;

  @ApiProperty({ type: String, minLength: 1, maxLength: 256, example: 'Chapter 1: Overworld' })
  @IsString()
  @IsNotEmpty()
  @IsText(256)
  displayName!: string;

  @ApiProperty({ enum: PACK_TYPES, enumName: 'PackType', example: 'CHAPTER' })
  @IsIn(PACK_TYPES, { message: `type must be one of ${PACK_TYPES.join(', ')}` })
  type!: PackType;

  @ApiProperty({
    type: 'array',
    items: { type: 'integer', minimum: 0, maximum: 2_147_483_647 },
    maxItems: 100_000,
    description: 'Ids of the songs the pack covers (duplicates are dropped)',
    example: [1, 2, 3],
  })
  @IsArray()
  @ArrayMaxSize(100_000)
  @IsInt({ each: true, message: 'availableSongs must contain only integers' })
  @Min(0, { each: true, message: 'availableSongs must contain only ids of 0 or more' })
  @Max(2_147_483_647, { each: true, message: 'availableSongs must contain only ids up to 2147483647' })
  availableSongs!: number[];

  /** A `.zip` directly under `packs/`, present in the index. */
  @ApiProperty({
    type: String,
    minLength: 1,
    maxLength: 1024,
    description: 'A .zip directly under packs/ that is in the resource index (rescan after adding it)',
    example: 'packs/chapter-1.zip',
  })
  @IsString()
  @IsNotEmpty()
  @IsText(1024)
  file!: string;
}

/** interface.md "Resource-pack entry". */
export class PackManifestEntry {
  @ApiProperty({ type: String, example: 'chapter-1' })
  name!: string;

  @ApiProperty({ type: String, example: 'Chapter 1: Overworld' })
  displayName!: string;

  @ApiProperty({ enum: PACK_TYPES, enumName: 'PackType', example: 'CHAPTER' })
  type!: PackType;

  @ApiProperty({ type: 'array', items: { type: 'integer' }, description: 'Ids of the songs covered', example: [1, 2, 3] })
  availableSongs!: number[];

  @ApiProperty({ type: 'integer', format: 'int64', description: 'Size in bytes, computed from the file', example: 104857600 })
  size!: number;

  @ApiProperty({ type: String, pattern: '^[0-9a-f]{40}$', description: 'SHA-1 of the file', example: '2fd4e1c67a2d28fced849ee1bb76e7391b93eb12' })
  sha1!: string;

  @ApiProperty({
    type: String,
    description: 'Direct download address (CDN or signed link); never carries a token',
    example: 'https://rhythmc.example.org/resources/files/packs/chapter-1.zip?expires=1774003600&sig=3q2-7wT0bYpQ1cG0mN8rVfJ5sK2xL9aE4dH6uZ1oWiA',
  })
  url!: string;
}

/** A described pack as the admin API lists it: what PUT stored, and its file as indexed. */
export class AdminPackResponse {
  @ApiProperty({ type: String, example: 'chapter-1' })
  name!: string;

  @ApiProperty({ type: String, example: 'Chapter 1: Overworld' })
  displayName!: string;

  @ApiProperty({ enum: PACK_TYPES, enumName: 'PackType', example: 'CHAPTER' })
  type!: PackType;

  @ApiProperty({ type: 'array', items: { type: 'integer' }, example: [1, 2, 3] })
  availableSongs!: number[];

  @ApiProperty({ type: String, example: 'packs/chapter-1.zip' })
  file!: string;

  @ApiProperty({
    type: 'integer',
    format: 'int64',
    nullable: true,
    description: 'Bytes of the indexed file; null when the file is not in the index (the pack is then left out of the pack manifest)',
    example: 104857600,
  })
  size!: number | null;

  @ApiProperty({ type: String, nullable: true, description: 'SHA-1 of the indexed file; null when it is not indexed' })
  sha1!: string | null;
}

export class AdminPackList {
  @ApiProperty({ type: [AdminPackResponse], description: 'Every described pack, by name' })
  items!: AdminPackResponse[];
}
