import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { NETWORK_NAME_MESSAGE, NETWORK_NAME_PATTERN } from '../../common/validation/network-name';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { HANDOVER_LOGIN_MODES, HandoverLoginMode } from '../server.types';
import { IsText } from '../../common/validation/is-text';

export class MaintenanceDto {
  @ApiProperty({ type: Boolean, description: 'While true, server logins answer 401 MAINTENANCE', example: true })
  @IsBoolean()
  enabled!: boolean;

  @ApiPropertyOptional({
    type: String,
    maxLength: 512,
    description: 'Message of the 401 (printed on the game server console); default ""',
    example: 'Back at 18:00',
  })
  @IsOptional()
  @IsString()
  @IsText(512)
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
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: 2_147_483_647,
    description: 'Logins of older plugin versions get 426',
    example: 40,
  })
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  minPluginVersion!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: 2_147_483_647,
    description: 'toVersion of the 426; not below minPluginVersion',
    example: 42,
  })
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
  @IsText(128, { each: true })
  allowedPluginSHAs!: string[];

  @ApiProperty({
    type: String,
    maxLength: 2048,
    description: 'downUrl of the 426',
    example: 'https://example.org/rhythmc-42.jar',
  })
  @IsString()
  @IsText(2048)
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

export class HandoverGroupDto {
  @ApiProperty({
    type: String,
    maxLength: 64,
    pattern: '^[A-Za-z0-9_.-]+$',
    description: 'A name for the network (for the admins)',
    example: 'eu-lobby',
  })
  @IsString()
  @Matches(NETWORK_NAME_PATTERN, { message: NETWORK_NAME_MESSAGE })
  name!: string;

  @ApiProperty({
    type: 'integer',
    isArray: true,
    minItems: 2,
    maxItems: 10_000,
    description: 'The serverIDs of the network; a server is in at most one group',
    example: [1, 2, 3],
  })
  @IsArray()
  @ArrayMinSize(2)
  @ArrayMaxSize(10_000)
  @IsInt({ each: true, message: 'serverIDs must be integers from 1 to 2147483647' })
  @Min(1, { each: true, message: 'serverIDs must be integers from 1 to 2147483647' })
  @Max(2_147_483_647, { each: true, message: 'serverIDs must be integers from 1 to 2147483647' })
  serverIDs!: number[];
}

/** PUT /admin/session-handover (docs/decisions.md "Server switching"). */
export class SessionHandoverDto {
  @ApiProperty({
    enum: ['off', 'all', 'groups'],
    description:
      'off: a second login answers 409 (the spec). all: every server is one network. groups: each group is one network',
    example: 'groups',
  })
  @IsIn(['off', 'all', 'groups'])
  mode!: 'off' | 'all' | 'groups';

  @ApiPropertyOptional({
    type: [HandoverGroupDto],
    maxItems: 1000,
    description: 'Required (at least one) with mode groups; must be absent or empty otherwise',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => HandoverGroupDto)
  groups?: HandoverGroupDto[];

  @ApiPropertyOptional({
    enum: HANDOVER_LOGIN_MODES,
    isArray: true,
    description: 'The login modes that may take a session over; default all three',
    example: ['TOKEN', 'OFFLINE_REFRESH', 'ONLINE'],
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(3)
  @IsIn(HANDOVER_LOGIN_MODES, { each: true })
  modes?: HandoverLoginMode[];
}

/** 200 of PUT /admin/session-handover: the setting now in force. */
export class SessionHandoverResponse {
  @ApiProperty({ enum: ['off', 'all', 'groups'], example: 'groups' })
  mode!: 'off' | 'all' | 'groups';

  @ApiProperty({ type: [HandoverGroupDto] })
  groups!: HandoverGroupDto[];

  @ApiProperty({ enum: HANDOVER_LOGIN_MODES, isArray: true, example: ['ONLINE', 'TOKEN', 'OFFLINE_REFRESH'] })
  modes!: HandoverLoginMode[];
}
