import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { onlineServer } from '../factories/server.factory';
import { HttpClient } from '../support/http';
import { spawnServiceChild, startServiceChild } from '../support/service-child';
import { ADMIN_TOKEN, freshDatabase, testServiceEnv } from '../support/test-app';
import { WsClient } from '../support/ws-client';
import { testDatabaseServerUrl } from '../setup/test-env';

/**
 * A promise rejected that nothing handles, in a real service process (docs/decisions.md "Signals
 * at any time"): the process stops as on a fatal failure, closed as far as it can be (a WebSocket
 * closed with 1001, the embedded database shut down with its lock released) and exits 1, where
 * Node's default ends it at once (1006 on the socket, the lock left). The test's service process
 * makes the rejection on an IPC message (test/support/service-process.ts).
 */
const onPostgres = testDatabaseServerUrl() !== null;

describe('A rejection nothing handles: the service process stops cleanly and exits 1', () => {
  it('logs it, closes the WebSockets with 1001 and the embedded database with its lock, exits 1; the next start has the data', async () => {
    const database = await freshDatabase();
    try {
      const env: Record<string, string> = { ...testServiceEnv(), ...database.env, LOG_LEVEL: 'info' };
      const child = spawnServiceChild(env);
      const { port } = await child.listening;
      const baseUrl = `http://127.0.0.1:${port}`;
      const clients = { http: new HttpClient(baseUrl), admin: new HttpClient(baseUrl, ADMIN_TOKEN) };
      const server = await onlineServer(clients, { name: 'before-the-rejection' });
      const socket = await WsClient.connect(baseUrl, server.accessToken);

      child.process.send({ type: 'reject-unhandled' });
      expect(await child.exited).toBe(1);
      expect(child.stdout()).toMatch(
        /Cannot go on: a promise was rejected and nothing handled it: Error: a rejection nobody handles \(test\)/,
      );
      expect((await socket.closed).code).toBe(1001);
      if (!onPostgres) expect(existsSync(join(env.DATA_DIR, 'pglite.lock'))).toBe(false);

      const next = await startServiceChild(env);
      try {
        const admin = new HttpClient(`http://127.0.0.1:${next.port}`, ADMIN_TOKEN);
        const servers = await admin.get<{ items: Array<{ serverName: string }> }>('/admin/servers?limit=100');
        expect(servers.status).toBe(200);
        expect(servers.body.items.map((item) => item.serverName)).toContain('before-the-rejection');
      } finally {
        next.process.kill('SIGTERM');
        expect(await next.exited).toBe(0);
      }
    } finally {
      await database.drop();
    }
  }, 180_000);
});
