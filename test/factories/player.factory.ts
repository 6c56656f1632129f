import { randomBytes, randomUUID } from 'node:crypto';
import type { TestClients } from '../support/test-app';
import type { TestServerSession } from './server.factory';

export interface TestPlayer {
  uid: number;
  username: string;
  netToken: string;
}

export interface TestPlayerSession extends TestPlayer {
  accessToken: string;
  profile: Record<string, any>;
}

export function randomUsername(): string {
  return `p_${randomBytes(5).toString('hex')}`;
}

export function randomUuid(): string {
  return randomUUID();
}

/** Creates a player through the admin API and gives it a Net Token. */
export async function createPlayer(
  app: TestClients,
  overrides: { username?: string; uuid?: string; displayName?: string } = {},
): Promise<TestPlayer> {
  const username = overrides.username ?? randomUsername();
  const created = await app.admin.post('/admin/players', {
    username,
    ...(overrides.uuid ? { uuid: overrides.uuid } : {}),
    ...(overrides.displayName !== undefined ? { displayName: overrides.displayName } : {}),
  });
  if (created.status !== 201) throw new Error(`createPlayer: ${created.status} ${created.text}`);
  const token = await app.admin.post(`/admin/players/${created.body.uid}/net-token`);
  if (token.status !== 201) throw new Error(`netToken: ${token.status} ${token.text}`);
  return { uid: created.body.uid, username, netToken: token.body.netToken };
}

/** Logs the player in (TOKEN mode) through the given server session. */
export async function loginPlayer(
  app: TestClients,
  server: TestServerSession,
  player: TestPlayer,
  version = 1,
): Promise<TestPlayerSession> {
  const response = await app.http.post(
    '/player/login',
    { mode: 'TOKEN', version, authToken: player.netToken },
    { token: server.accessToken },
  );
  if (response.status !== 200) throw new Error(`loginPlayer: ${response.status} ${response.text}`);
  return { ...player, accessToken: response.body.accessToken, profile: response.body };
}

/** Creates a player and logs it in through the server session. */
export async function onlinePlayer(
  app: TestClients,
  server: TestServerSession,
  overrides: { username?: string; displayName?: string } = {},
): Promise<TestPlayerSession> {
  return loginPlayer(app, server, await createPlayer(app, overrides));
}
