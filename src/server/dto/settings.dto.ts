import { ArrayMaxSize, IsArray, IsBoolean, IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export class MaintenanceDto {
  @IsBoolean()
  enabled!: boolean;

  @IsOptional()
  @IsString()
  @MaxLength(512)
  message?: string;
}

export class PluginPolicyDto {
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  minPluginVersion!: number;

  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  latestPluginVersion!: number;

  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @IsNotEmpty({ each: true })
  @MaxLength(128, { each: true })
  allowedPluginSHAs!: string[];

  @IsString()
  @MaxLength(2048)
  downUrl!: string;
}
