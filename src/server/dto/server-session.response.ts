/** interface.md "Server session (result of server login)". */
export class ServerSessionResponse {
  serverID!: number;
  serverName!: string;
  assetServer!: string;
  serverIP!: string;
  country!: string;
  wsServer!: string;
  accessToken!: string;
  expiresIn!: number;
}

export class ServerTokenResponse {
  accessToken!: string;
  expiresIn!: number;
}
