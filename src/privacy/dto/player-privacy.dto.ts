import { ApiProperty } from '@nestjs/swagger';
import { IsString } from 'class-validator';
import { IsText } from '../../common/validation/is-text';

export class ErasePlayerDto {
  @ApiProperty({
    type: String,
    maxLength: 32,
    description: "The player's current username, exactly: proves the operator named the player they meant",
    example: 'Steve',
  })
  @IsString()
  @IsText(32)
  confirm!: string;
}

export class PlayerExportResponse {
  @ApiProperty({ type: String, example: 'rhythmc-player-export/1' })
  format!: string;

  @ApiProperty({ type: 'integer', format: 'int64', example: 1002 })
  uid!: number;

  @ApiProperty({ type: String, format: 'date-time', example: '2026-11-28T10:00:00.000Z' })
  exportedAt!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'object' } },
    description:
      'Every row that refers to the player, by table (src/privacy/player-data.map.ts): the player row, sessions, takeovers, token dates (never their hashes), collections, balance and its history, bans, bests, rating, plays, other players’ plays naming them as rival (without the other player), pending kicks, audit rows',
  })
  tables!: Record<string, unknown[]>;
}

export class PlayerErasureResponse {
  @ApiProperty({ type: 'integer', format: 'int64', example: 1002 })
  uid!: number;

  @ApiProperty({ type: String, example: 'erased-3f9a0c1b2d4e', description: 'What the audit rows call the player now' })
  pseudonym!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    description: 'Rows deleted or anonymised, by table key of the export',
  })
  rows!: Record<string, number>;
}
