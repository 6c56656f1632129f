import { IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export class ServerLoginDto {
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  pluginVersion!: number;

  @IsString()
  @IsNotEmpty()
  @MaxLength(128)
  pluginSHA!: string;

  /** Legacy: read by the guard only when the Authorization header is absent. */
  @IsOptional()
  @IsString()
  @MaxLength(512)
  serverAuthToken?: string;
}
