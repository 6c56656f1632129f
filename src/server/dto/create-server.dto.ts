import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIP, IsNotEmpty, IsOptional, IsString } from 'class-validator';
import { IsText } from '../../common/validation/is-text';

export class CreateServerDto {
  @ApiProperty({ type: String, minLength: 1, maxLength: 64, description: 'Unique server name', example: 'lobby-1' })
  @IsString()
  @IsNotEmpty()
  @IsText(64)
  name!: string;

  @ApiProperty({ type: String, minLength: 1, maxLength: 64, description: 'Country or region', example: 'DE' })
  @IsString()
  @IsNotEmpty()
  @IsText(64)
  country!: string;

  @ApiPropertyOptional({
    type: String,
    description: 'Public IPv4 or IPv6 address; without one, serverIP is the address a login comes from',
    example: '203.0.113.7',
  })
  @IsOptional()
  @IsIP()
  ip?: string;
}

export class CreatedServerResponse {
  @ApiProperty({ type: 'integer', example: 1 })
  serverID!: number;

  @ApiProperty({ type: String, example: 'lobby-1' })
  serverName!: string;

  @ApiProperty({
    type: String,
    description: 'The bootstrap token for the plugin configuration; shown only here',
    example: 'Qm9vdHN0cmFwVG9rZW5FeGFtcGxlMDEyMzQ1Njc4OWFi',
  })
  bootstrapToken!: string;
}
