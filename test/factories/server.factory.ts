import { randomBytes } from 'node:crypto';
import type { TestClients } from '../support/test-app';

export interface TestServer {
  serverID: number;
  serverName: string;
  bootstrapToken: string;
}

export interface TestServerSession {
  serverID: number;
  accessToken: string;
  expiresIn: number;
  body: Record<string, unknown>;
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** Registers a game server through the admin API. */
export async function createServer(
  app: TestClients,
  overrides: { name?: string; country?: string; ip?: string } = {},
): Promise<TestServer> {
  const response = await app.admin.post('/admin/servers', {
    name: overrides.name ?? uniqueName('srv'),
    country: overrides.country ?? 'DE',
    ...(overrides.ip ? { ip: overrides.ip } : {}),
  });
  if (response.status !== 201) throw new Error(`createServer: ${response.status} ${response.text}`);
  return response.body as TestServer;
}

/** Logs a game server in the way the plugin does. */
export async function loginServer(
  app: TestClients,
  server: TestServer,
  body: Record<string, unknown> = {},
): Promise<TestServerSession> {
  const response = await app.http.post(
    '/server/login',
    { pluginVersion: 10, pluginSHA: 'sha-test', ...body },
    { token: server.bootstrapToken },
  );
  if (response.status !== 200) throw new Error(`loginServer: ${response.status} ${response.text}`);
  return {
    serverID: response.body.serverID,
    accessToken: response.body.accessToken,
    expiresIn: response.body.expiresIn,
    body: response.body,
  };
}

/** Creates and logs in a server in one step. */
export async function onlineServer(
  app: TestClients,
  overrides: { name?: string; country?: string; ip?: string } = {},
): Promise<TestServerSession & { server: TestServer }> {
  const server = await createServer(app, overrides);
  return { ...(await loginServer(app, server)), server };
}
