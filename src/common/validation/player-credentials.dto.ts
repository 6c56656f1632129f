import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { IsUid } from './is-uid';

/**
 * The player identity a game server sends in the body of player calls: the uid and that player's
 * access token. Action DTOs extend it (class-validator applies the inherited rules).
 */
export class PlayerCredentialsDto {
  @IsUid()
  uid!: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(512)
  accessToken!: string;
}
