import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsString, ValidateBy, ValidationArguments } from 'class-validator';
import { PlayerCredentialsDto } from '../../common/validation/player-credentials.dto';
import { COLLECTION_KEY_MAX_LENGTH, COLLECTION_KEY_PATTERN, isCollectionKey } from '../catalog.rules';
import { PluginBody } from '../../common/validation/plugin-body';

export const MAX_SYNCED_KEYS = 5000;
const MAX_KEYS_IN_MESSAGE = 20;

function malformedKeys(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.filter((key): key is string => typeof key === 'string' && !isCollectionKey(key));
}

/** Every string of the array is a collection key; the message lists the ones that are not. */
function AreCollectionKeys() {
  return ValidateBy({
    name: 'areCollectionKeys',
    validator: {
      validate: (value: unknown) => malformedKeys(value).length === 0,
      defaultMessage: (args?: ValidationArguments) => {
        const bad = malformedKeys(args?.value);
        const listed = bad.slice(0, MAX_KEYS_IN_MESSAGE).map((key) => JSON.stringify(key.slice(0, 160)));
        const more = bad.length > MAX_KEYS_IN_MESSAGE ? ` and ${bad.length - MAX_KEYS_IN_MESSAGE} more` : '';
        return `$property must hold keys of the form namespace:category.id; malformed: ${listed.join(', ')}${more}`;
      },
    },
  });
}

/** POST /player/collections (interface.md; decisions.md §4). */
@PluginBody()
export class SyncCollectionsDto extends PlayerCredentialsDto {
  @ApiProperty({
    type: 'array',
    items: { type: 'string', pattern: COLLECTION_KEY_PATTERN.source, maxLength: COLLECTION_KEY_MAX_LENGTH },
    maxItems: MAX_SYNCED_KEYS,
    description:
      'Keys to grant (never removes any). Unknown keys starting with `rhythmc:assets.` are created as asset collections; ' +
      'any other unknown key makes the whole request 400',
    example: ['rhythmc:titles.champion', 'rhythmc:assets.songs.12'],
  })
  @IsArray()
  @ArrayMaxSize(MAX_SYNCED_KEYS)
  @IsString({ each: true })
  @AreCollectionKeys()
  collections!: string[];
}
