import { ApiProperty } from '@nestjs/swagger';

/** interface.md "Server session (result of server login)". */
export class ServerSessionResponse {
  @ApiProperty({ type: 'integer', description: 'Unique id of the server in the backend', example: 1 })
  serverID!: number;

  @ApiProperty({ type: String, description: 'Server name', example: 'lobby-1' })
  serverName!: string;

  @ApiProperty({
    type: String,
    description: 'Base URL of the resource server ({asset_url})',
    example: 'https://rhythmc.example.org',
  })
  assetServer!: string;

  @ApiProperty({
    type: String,
    description: 'Public IP address of the server: the registered one, else the address the login came from',
    example: '203.0.113.7',
  })
  serverIP!: string;

  @ApiProperty({ type: String, description: 'Country or region of the server', example: 'DE' })
  country!: string;

  @ApiProperty({ type: String, description: 'WebSocket address ({ws_url})', example: 'wss://rhythmc.example.org/ws' })
  wsServer!: string;

  @ApiProperty({
    type: String,
    description: 'Short-lived opaque server access token',
    example: 'pD4c2y0Yb1t1oHc6T0kq3wQeR9Zs8Lm2Vn5Xa7Jf4Ug',
  })
  accessToken!: string;

  @ApiProperty({ type: 'integer', description: 'Lifetime of accessToken in seconds', example: 600 })
  expiresIn!: number;
}

export class ServerTokenResponse {
  @ApiProperty({
    type: String,
    description: 'The new server access token; the old one stops working',
    example: 'b7Kq0xT3m9Lw2Zr5Yc8Nd1Fh4Gj6Sa0Pe3Vu7Ii9Oo2',
  })
  accessToken!: string;

  @ApiProperty({ type: 'integer', description: 'Lifetime of accessToken in seconds', example: 600 })
  expiresIn!: number;
}
