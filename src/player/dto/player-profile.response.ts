import { ApiProperty } from '@nestjs/swagger';
import { OPTIONS_RESPONSE_SCHEMA } from './player-options.dto';

export class PlayerDataResponse {
  @ApiProperty({
    type: [String],
    description: 'Keys of every collection the player has unlocked (titles, tags, `rhythmc:assets.` unlocks)',
    example: ['rhythmc:titles.champion', 'rhythmc:assets.songs.12'],
  })
  collections!: string[];
}

/** interface.md "Player profile response", plus uid, username, displayName (decisions.md §4). */
export class PlayerProfileResponse {
  @ApiProperty({ type: 'integer', format: 'int64', description: 'Player uid', example: 1001 })
  uid!: number;

  @ApiProperty({ type: String, description: 'Stored account name', example: 'Notch' })
  username!: string;

  @ApiProperty({ type: String, description: 'Display name; equals username when none is set', example: 'Notch' })
  displayName!: string;

  /** The data version stored before this login. */
  @ApiProperty({
    type: 'integer',
    description: "The player data version stored before this login (the request's version is stored afterwards)",
    example: 2,
  })
  version!: number;

  @ApiProperty({
    type: 'integer',
    description: 'Greater than 0: the account carries a warning (the client shows a red title notice)',
    example: 0,
  })
  banstate!: number;

  @ApiProperty({
    type: String,
    description: 'Player access token (WebSocket resume, options, collections, economy, upload, logout)',
    example: 'pl4yerAcc3ssT0kenExample0123456789abcdefABCD',
  })
  accessToken!: string;

  @ApiProperty({ type: 'integer', description: 'Seconds left on accessToken', example: 600 })
  expiresIn!: number;

  /** '' while continueEnabled is false. */
  @ApiProperty({
    type: String,
    description:
      'A freshly issued resume token while options.continueEnabled is true (the previous one stops working); "" otherwise',
    example: '',
  })
  resumeToken!: string;

  @ApiProperty({ type: 'integer', description: 'Lifetime of resumeToken in seconds; 0 when there is none', example: 0 })
  resumeExpiresIn!: number;

  /** Selected title keys ('' when none). */
  @ApiProperty({
    type: String,
    description: 'Key of the selected prefix title, "" when none',
    example: 'rhythmc:titles.champion',
  })
  playerPrefix!: string;

  @ApiProperty({ type: String, description: 'Key of the selected suffix title, "" when none', example: '' })
  playerSuffix!: string;

  @ApiProperty(OPTIONS_RESPONSE_SCHEMA)
  options!: Record<string, unknown> & {
    continueEnabled: boolean;
    sound: Record<string, unknown>;
    songSelectionState: Record<string, unknown>;
  };

  @ApiProperty({ type: PlayerDataResponse })
  data!: PlayerDataResponse;
}
