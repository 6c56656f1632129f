import { IsIn, IsInt, IsNotEmpty, IsString, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import type { PlayerLoginMode } from '../../auth/entities/player-session.entity';

export const PLAYER_LOGIN_MODES: PlayerLoginMode[] = ['ONLINE', 'TOKEN', 'OFFLINE_REFRESH'];
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
export const USERNAME_PATTERN = /^[A-Za-z0-9_]{1,16}$/;

/** POST /player/login (interface.md; decisions.md §4). Each mode requires its own field. */
export class PlayerLoginDto {
  @IsIn(PLAYER_LOGIN_MODES)
  mode!: PlayerLoginMode;

  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  version!: number;

  @ValidateIf((dto: PlayerLoginDto) => dto.mode === 'ONLINE' || dto.uuid !== undefined)
  @Matches(UUID_PATTERN, { message: 'uuid must be a UUID in 8-4-4-4-12 hexadecimal form' })
  uuid?: string;

  @ValidateIf((dto: PlayerLoginDto) => dto.mode === 'ONLINE' || dto.username !== undefined)
  @Matches(USERNAME_PATTERN, { message: 'username must be 1-16 characters of A-Z, a-z, 0-9 and _' })
  username?: string;

  @ValidateIf((dto: PlayerLoginDto) => dto.mode === 'TOKEN' || dto.authToken !== undefined)
  @IsString()
  @IsNotEmpty()
  @MaxLength(512)
  authToken?: string;

  @ValidateIf((dto: PlayerLoginDto) => dto.mode === 'OFFLINE_REFRESH' || dto.resumeToken !== undefined)
  @IsString()
  @IsNotEmpty()
  @MaxLength(512)
  resumeToken?: string;
}
