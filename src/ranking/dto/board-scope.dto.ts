import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** A country board's parameter: ISO codes and English names (a registered country outside this alphabet has no country board). */
export const COUNTRY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$/;

/** The scope of a scoped board answer (`group` or `country`): what was asked and the servers it covered. */
export class BoardScopeView {
  @ApiProperty({ type: String, enum: ['group', 'country'], example: 'group' })
  kind!: 'group' | 'country';

  @ApiProperty({ type: String, description: 'The group name or the country, as asked', example: 'eu-lobby' })
  name!: string;

  @ApiPropertyOptional({
    type: 'integer',
    isArray: true,
    description:
      'The servers of the scope at the read, ascending: a player is on the board when its home server is one of them. Not in the public API (/public/v1), whose answers name no server',
    example: [1, 2],
  })
  serverIDs!: number[];
}
