import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsNotEmpty, IsString, Matches, Max, Min, ValidateIf } from 'class-validator';
import type { PlayerLoginMode } from '../../auth/entities/player-session.entity';
import { NullAsAbsent, PluginBody } from '../../common/validation/plugin-body';
import { IsText } from '../../common/validation/is-text';

export const PLAYER_LOGIN_MODES: PlayerLoginMode[] = ['ONLINE', 'TOKEN', 'OFFLINE_REFRESH'];
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
export const USERNAME_PATTERN = /^[A-Za-z0-9_]{1,16}$/;

/** POST /player/login (interface.md; decisions.md §4). Each mode requires its own field. */
@PluginBody()
export class PlayerLoginDto {
  @ApiProperty({
    enum: PLAYER_LOGIN_MODES,
    enumName: 'PlayerLoginMode',
    description: 'How the player is identified',
    example: 'ONLINE',
  })
  @IsIn(PLAYER_LOGIN_MODES)
  mode!: PlayerLoginMode;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: 2_147_483_647,
    description:
      'Player data version of the running plugin; stored after the login (the answer carries the previous one)',
    example: 3,
  })
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  version!: number;

  @ApiPropertyOptional({
    type: String,
    pattern: UUID_PATTERN.source,
    description:
      'ONLINE (required): the account UUID in 8-4-4-4-12 hexadecimal form, checked with the identity provider',
    example: '069a79f4-44e9-4726-a5be-fca90e38aaf5',
  })
  @NullAsAbsent()
  @ValidateIf((dto: PlayerLoginDto) => dto.mode === 'ONLINE' || dto.uuid !== undefined)
  @Matches(UUID_PATTERN, { message: 'uuid must be a UUID in 8-4-4-4-12 hexadecimal form' })
  uuid?: string;

  @ApiPropertyOptional({
    type: String,
    pattern: USERNAME_PATTERN.source,
    description: 'ONLINE (required): the account name; must match the UUID ignoring case',
    example: 'Notch',
  })
  @NullAsAbsent()
  @ValidateIf((dto: PlayerLoginDto) => dto.mode === 'ONLINE' || dto.username !== undefined)
  @Matches(USERNAME_PATTERN, { message: 'username must be 1-16 characters of A-Z, a-z, 0-9 and _' })
  username?: string;

  @ApiPropertyOptional({
    type: String,
    maxLength: 512,
    nullable: true,
    description:
      'TOKEN (required, non-empty): the Net Token the player entered. Other modes: ignored; absent, empty or null',
  })
  @NullAsAbsent()
  // The plugin sends authToken with every mode (optional for ONLINE): an empty one outside TOKEN is no token.
  @ValidateIf((dto: PlayerLoginDto) => dto.mode === 'TOKEN' || (dto.authToken !== undefined && dto.authToken !== ''))
  @IsString()
  @IsNotEmpty()
  @IsText(512)
  authToken?: string;

  @ApiPropertyOptional({
    type: String,
    maxLength: 512,
    nullable: true,
    description:
      "OFFLINE_REFRESH (required, non-empty): the cached resume token; works only while the player's continueEnabled is true. " +
      "Other modes: ignored; absent, empty (the plugin's empty cache) or null",
  })
  @NullAsAbsent()
  // The plugin's resume-token cache is "" when it holds none: an empty one outside OFFLINE_REFRESH is no token.
  @ValidateIf(
    (dto: PlayerLoginDto) =>
      dto.mode === 'OFFLINE_REFRESH' || (dto.resumeToken !== undefined && dto.resumeToken !== ''),
  )
  @IsString()
  @IsNotEmpty()
  @IsText(512)
  resumeToken?: string;
}
