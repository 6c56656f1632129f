import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { UUID_PATTERN } from './player-login.dto';

export class CreatePlayerDto {
  @Matches(/^[A-Za-z0-9_]{1,32}$/, { message: 'username must be 1-32 characters of A-Z, a-z, 0-9 and _' })
  username!: string;

  @IsOptional()
  @Matches(UUID_PATTERN, { message: 'uuid must be a UUID in 8-4-4-4-12 hexadecimal form' })
  uuid?: string;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  displayName?: string;
}

export class CreatedPlayerResponse {
  uid!: number;
  username!: string;
  displayName!: string;
  uuid!: string | null;
}

export class BanPlayerDto {
  @IsOptional()
  @IsString()
  @MaxLength(512)
  reason?: string;

  /** ISO local date-time `YYYY-MM-DDTHH:mm:ss`; absent = permanent. */
  @IsOptional()
  @IsString()
  until?: string;

  /** Kick message shown in game. */
  @IsOptional()
  @IsString()
  @MaxLength(512)
  message?: string;
}

export class BanResponse {
  uid!: number;
  reason!: string;
  message!: string;
  /** '' for a permanent ban. */
  until!: string;
}

export class BanstateDto {
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  banstate!: number;
}

export class BanstateResponse {
  uid!: number;
  banstate!: number;
}

export class NetTokenResponse {
  netToken!: string;
}
