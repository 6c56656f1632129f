import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString } from 'class-validator';
import { IsUid, UID_REQUEST_SCHEMA } from './is-uid';
import { IsText } from './is-text';

/**
 * The player identity a game server sends in the body of player calls: the uid and that player's
 * access token. Action DTOs extend it (class-validator applies the inherited rules).
 */
export class PlayerCredentialsDto {
  @ApiProperty({
    ...UID_REQUEST_SCHEMA,
    description: 'Player uid (a long; a string of digits is accepted too)',
    example: 1001,
  })
  @IsUid()
  uid!: string;

  @ApiProperty({
    type: String,
    minLength: 1,
    maxLength: 512,
    description:
      "The player's access token from POST /player/login; it must belong to uid and to the calling server session",
    example: 'pl4yerAcc3ssT0kenExample0123456789abcdefABCD',
  })
  @IsString()
  @IsNotEmpty()
  @IsText(512)
  accessToken!: string;
}
