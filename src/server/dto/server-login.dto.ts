import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsNotEmpty, IsOptional, IsString, Max, Min } from 'class-validator';
import { NullAsAbsent, PluginBody } from '../../common/validation/plugin-body';
import { IsText } from '../../common/validation/is-text';

@PluginBody()
export class ServerLoginDto {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: 2_147_483_647,
    description: 'Version code of the running plugin build',
    example: 42,
  })
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  pluginVersion!: number;

  @ApiProperty({
    type: String,
    minLength: 1,
    maxLength: 128,
    description: 'SHA of the plugin build',
    example: '3f786850e387550fdab836ed7e6dc881de23001b',
  })
  @IsString()
  @IsNotEmpty()
  @IsText(128)
  pluginSHA!: string;

  /** Legacy: read by the guard only when the Authorization header is absent. */
  @ApiPropertyOptional({
    type: String,
    maxLength: 512,
    deprecated: true,
    description: 'Legacy: the bootstrap token in the body, read only when the Authorization header is absent',
  })
  @NullAsAbsent()
  @IsOptional()
  @IsString()
  @IsText(512)
  serverAuthToken?: string;
}
