import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { UUID_PATTERN } from './player-login.dto';
import { IsText } from '../../common/validation/is-text';

export class CreatePlayerDto {
  @ApiProperty({ type: String, pattern: '^[A-Za-z0-9_]{1,32}$', description: 'Account name', example: 'Steve' })
  @Matches(/^[A-Za-z0-9_]{1,32}$/, { message: 'username must be 1-32 characters of A-Z, a-z, 0-9 and _' })
  username!: string;

  @ApiPropertyOptional({
    type: String,
    pattern: UUID_PATTERN.source,
    description: 'Account UUID, unique; stored lower-case',
    example: '8667ba71-b85a-4004-af54-457a9734eed7',
  })
  @IsOptional()
  @Matches(UUID_PATTERN, { message: 'uuid must be a UUID in 8-4-4-4-12 hexadecimal form' })
  uuid?: string;

  @ApiPropertyOptional({
    type: String,
    maxLength: 64,
    description: 'Display name; default: the username',
    example: 'Steve',
  })
  @IsOptional()
  @IsString()
  @IsText(64)
  displayName?: string;
}

export class CreatedPlayerResponse {
  @ApiProperty({ type: 'integer', format: 'int64', example: 1002 })
  uid!: number;

  @ApiProperty({ type: String, example: 'Steve' })
  username!: string;

  @ApiProperty({ type: String, example: 'Steve' })
  displayName!: string;

  @ApiProperty({ type: String, nullable: true, example: '8667ba71-b85a-4004-af54-457a9734eed7' })
  uuid!: string | null;
}

export class BanPlayerDto {
  @ApiPropertyOptional({
    type: String,
    maxLength: 512,
    description: 'Shown to the player (430 and kick_player); default ""',
    example: 'cheating',
  })
  @IsOptional()
  @IsString()
  @IsText(512)
  reason?: string;

  /** ISO local date-time `YYYY-MM-DDTHH:mm:ss`; absent = permanent. */
  @ApiPropertyOptional({
    type: String,
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}$',
    description: "End of the ban, a local date-time in the service's time zone, in the future; absent: permanent",
    example: '2026-04-01T12:00:00',
  })
  @IsOptional()
  @IsString()
  until?: string;

  /** Kick message shown in game. */
  @ApiPropertyOptional({
    type: String,
    maxLength: 512,
    description: 'Kick message shown in game; default "You are banned: <reason>" (or "You are banned")',
    example: 'You are banned until April',
  })
  @IsOptional()
  @IsString()
  @IsText(512)
  message?: string;
}

export class BanResponse {
  @ApiProperty({ type: 'integer', format: 'int64', example: 1002 })
  uid!: number;

  @ApiProperty({ type: String, example: 'cheating' })
  reason!: string;

  @ApiProperty({
    type: String,
    description: 'The kick message sent to online sessions',
    example: 'You are banned: cheating',
  })
  message!: string;

  /** '' for a permanent ban. */
  @ApiProperty({
    type: String,
    description: 'End of the ban as a local date-time; "" for a permanent ban',
    example: '2026-04-01T12:00:00',
  })
  until!: string;
}

export class BanstateDto {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: 2_147_483_647,
    description: 'Warning level; greater than 0 shows a red title notice in game',
    example: 1,
  })
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  banstate!: number;
}

export class BanstateResponse {
  @ApiProperty({ type: 'integer', format: 'int64', example: 1002 })
  uid!: number;

  @ApiProperty({ type: 'integer', example: 1 })
  banstate!: number;
}

export class NetTokenResponse {
  @ApiProperty({
    type: String,
    description: "The player's Net Token (TOKEN login); the old one stops working",
    example: 'N3tT0kenExample0123456789abcdefABCDEFghijkl',
  })
  netToken!: string;
}
