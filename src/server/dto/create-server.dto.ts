import { IsIP, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';

export class CreateServerDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  name!: string;

  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  country!: string;

  @IsOptional()
  @IsIP()
  ip?: string;
}

export class CreatedServerResponse {
  serverID!: number;
  serverName!: string;
  bootstrapToken!: string;
}
