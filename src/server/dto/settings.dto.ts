import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export class MaintenanceDto {
  @ApiProperty({ type: Boolean, description: 'While true, server logins answer 401 MAINTENANCE', example: true })
  @IsBoolean()
  enabled!: boolean;

  @ApiPropertyOptional({ type: String, maxLength: 512, description: 'Message of the 401 (printed on the game server console); default ""', example: 'Back at 18:00' })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  message?: string;
}

/** 200 of PUT /admin/maintenance: the setting now in force. */
export class MaintenanceResponse {
  @ApiProperty({ type: Boolean, example: true })
  enabled!: boolean;

  @ApiProperty({ type: String, example: 'Back at 18:00' })
  message!: string;
}

export class PluginPolicyDto {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 2_147_483_647, description: 'Logins of older plugin versions get 426', example: 40 })
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  minPluginVersion!: number;

  @ApiProperty({ type: 'integer', minimum: 0, maximum: 2_147_483_647, description: 'toVersion of the 426; not below minPluginVersion', example: 42 })
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  latestPluginVersion!: number;

  @ApiProperty({
    type: [String],
    maxItems: 1000,
    description: 'When not empty, only builds with one of these pluginSHA values may log in (each 1-128 characters)',
    example: ['3f786850e387550fdab836ed7e6dc881de23001b'],
  })
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @IsNotEmpty({ each: true })
  @MaxLength(128, { each: true })
  allowedPluginSHAs!: string[];

  @ApiProperty({ type: String, maxLength: 2048, description: 'downUrl of the 426', example: 'https://example.org/rhythmc-42.jar' })
  @IsString()
  @MaxLength(2048)
  downUrl!: string;
}

/** 200 of PUT /admin/plugin-policy: the policy now in force (duplicate SHAs removed). */
export class PluginPolicyResponse {
  @ApiProperty({ type: 'integer', example: 40 })
  minPluginVersion!: number;

  @ApiProperty({ type: 'integer', example: 42 })
  latestPluginVersion!: number;

  @ApiProperty({ type: [String], example: ['3f786850e387550fdab836ed7e6dc881de23001b'] })
  allowedPluginSHAs!: string[];

  @ApiProperty({ type: String, example: 'https://example.org/rhythmc-42.jar' })
  downUrl!: string;
}
