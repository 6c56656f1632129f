import { IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import { PlayerCredentialsDto } from '../../common/validation/player-credentials.dto';

/** POST /player/options. `options` is merged key by key into the stored options. */
export class PlayerOptionsDto extends PlayerCredentialsDto {
  @IsObject()
  options!: Record<string, unknown>;

  /** Key of an unlocked title collection, or '' to clear. */
  @IsOptional()
  @IsString()
  @MaxLength(128)
  playerPrefix?: string;

  @IsOptional()
  @IsString()
  @MaxLength(128)
  playerSuffix?: string;
}

export class PlayerLogoutDto extends PlayerCredentialsDto {}
