import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString } from 'class-validator';
import { PlayerCredentialsDto } from '../../common/validation/player-credentials.dto';
import { NullAsAbsent, PluginBody } from '../../common/validation/plugin-body';
import { IsText } from '../../common/validation/is-text';
import { RawJson } from '../../common/validation/raw-json';

const SONG_SELECTION_STATE = {
  type: 'object',
  additionalProperties: true,
  description: 'Kept as a JSON value; the client uses sortMode, difficulty, collection, songId and autoPlay',
  example: {
    sortMode: 'LEVEL',
    difficulty: 'NETHER',
    collection: 'rhythmc:collections.default',
    songId: 12,
    autoPlay: false,
  },
} as const;
const SOUND = {
  type: 'object',
  additionalProperties: true,
  description: 'Kept as a JSON value',
  example: { volume: 0.8 },
} as const;
const CORE_OPTIONS = {
  continueEnabled: {
    type: 'boolean',
    description: 'Whether the service may issue resume tokens (OFFLINE_REFRESH); default false',
  },
  sound: SOUND,
  songSelectionState: SONG_SELECTION_STATE,
} as const;

/** OpenAPI schema of `options` in a request: keys present replace the stored ones. */
const OPTIONS_REQUEST_SCHEMA: ApiPropertyOptions = {
  type: 'object',
  description:
    'Keys present replace the stored ones, absent keys are kept; unknown keys are stored and returned as sent',
  properties: CORE_OPTIONS,
  additionalProperties: true,
};

/** OpenAPI schema of `options` in the profile: the core keys always, plus every unknown key stored. */
export const OPTIONS_RESPONSE_SCHEMA: ApiPropertyOptions = {
  type: 'object',
  description: 'The stored options: the three core keys, plus every other key the plugin sent',
  properties: CORE_OPTIONS,
  required: ['continueEnabled', 'sound', 'songSelectionState'],
  // `required` above lists the inner keys; the property itself is required too.
  selfRequired: true,
  additionalProperties: true,
};

/** POST /player/options. `options` is merged key by key into the stored options. */
@PluginBody()
export class PlayerOptionsDto extends PlayerCredentialsDto {
  @ApiProperty(OPTIONS_REQUEST_SCHEMA)
  @RawJson()
  @IsObject()
  options!: Record<string, unknown>;

  /** Key of an unlocked title collection, or '' to clear. */
  @ApiPropertyOptional({
    type: String,
    maxLength: 128,
    description: 'Key of a title collection the player has unlocked, or "" to clear; absent keeps the current one',
    example: 'rhythmc:titles.champion',
  })
  @NullAsAbsent()
  @IsOptional()
  @IsString()
  @IsText(128)
  playerPrefix?: string;

  @ApiPropertyOptional({
    type: String,
    maxLength: 128,
    description: 'Like playerPrefix, for the suffix title',
    example: '',
  })
  @NullAsAbsent()
  @IsOptional()
  @IsString()
  @IsText(128)
  playerSuffix?: string;
}

@PluginBody()
export class PlayerLogoutDto extends PlayerCredentialsDto {}
