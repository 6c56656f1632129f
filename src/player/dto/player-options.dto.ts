import { IsNotEmpty, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import { IsUid } from '../../common/validation/is-uid';

/** POST /player/options. `options` is merged key by key into the stored options. */
export class PlayerOptionsDto {
  @IsUid()
  uid!: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(512)
  accessToken!: string;

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

export class PlayerLogoutDto {
  @IsUid()
  uid!: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(512)
  accessToken!: string;
}
