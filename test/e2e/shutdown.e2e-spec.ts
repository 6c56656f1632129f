import { request as httpRequest } from 'node:http';
import { connect as netConnect } from 'node:net';
import { Client } from 'pg';
import { EmbeddedDatabase } from '../../src/database/embedded/embedded-database';
import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer } from '../factories/server.factory';
import { HttpClient } from '../support/http';
import { startServiceChild } from '../support/service-child';
import { ADMIN_TOKEN, freshDatabase, testServiceEnv } from '../support/test-app';
import { WsClient } from '../support/ws-client';
import { sleep } from '../support/wait';

interface Attempt {
  uid: number;
  wattHour: number;
  afterSignal: boolean;
  /** HTTP status, or the network error code when no answer came. */
  outcome: number | string;
}

/** The error code of a failed fetch (undici wraps the socket error in `cause`). */
function networkCode(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? String(error);
}

/** True once nothing accepts TCP connections on the port any more. */
function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** Reads the stored balance history after the service process has exited. */
async function storedHistory(databaseEnv: Record<string, string>): Promise<Array<{ uid: string; watt_hour: string }>> {
  const embedded = databaseEnv.DATABASE_URL ? null : await EmbeddedDatabase.start(databaseEnv.DATA_DIR);
  const client = new Client({ connectionString: embedded?.url ?? databaseEnv.DATABASE_URL });
  await client.connect();
  try {
    return (
      await client.query<{ uid: string; watt_hour: string }>('SELECT uid::text, watt_hour::text FROM balance_history')
    ).rows;
  } finally {
    await client.end();
    await embedded?.stop();
  }
}

describe('Graceful shutdown: SIGTERM to a real service process under load', () => {
  it('stops accepting, finishes the requests in flight, loses no acknowledged write, closes sockets with 1001 and exits 0', async () => {
    const database = await freshDatabase();
    try {
      const child = await startServiceChild({ ...testServiceEnv(), ...database.env, SHUTDOWN_TIMEOUT_SECONDS: '60' });
      const baseUrl = `http://127.0.0.1:${child.port}`;
      const clients = { http: new HttpClient(baseUrl), admin: new HttpClient(baseUrl, ADMIN_TOKEN) };
      const session = await onlineServer(clients);
      const players: TestPlayerSession[] = [];
      for (let i = 0; i < 4; i++) players.push(await onlinePlayer(clients, session));
      const socket = await WsClient.connect(baseUrl, session.accessToken);

      // A write whose request is in flight when the signal arrives: headers and half the body now, the rest after.
      const slowPlayer = players[0];
      const slowBody = JSON.stringify({ uid: slowPlayer.uid, accessToken: slowPlayer.accessToken, wattHour: 999_999 });
      const slowRequest = httpRequest({
        host: '127.0.0.1',
        port: child.port,
        method: 'POST',
        path: '/player/economy',
        agent: false,
        headers: {
          Authorization: `Bearer ${session.accessToken}`,
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(slowBody),
        },
      });
      const slowAnswer = new Promise<{ status: number; body: unknown }>((resolve, reject) => {
        slowRequest.once('response', (response) => {
          let text = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          response.once('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
        });
        slowRequest.once('error', reject);
      });
      slowRequest.write(slowBody.slice(0, 20));

      // Concurrent balance syncs with distinct values until the service stops answering.
      const attempts: Attempt[] = [];
      let signaled = false;
      let nextValue = 0;
      const worker = async (player: TestPlayerSession) => {
        for (let sinceSignal = 0; sinceSignal < 500;) {
          const wattHour = ++nextValue;
          const afterSignal = signaled;
          try {
            const response = await clients.http.post(
              '/player/economy',
              { uid: player.uid, accessToken: player.accessToken, wattHour },
              { token: session.accessToken },
            );
            attempts.push({ uid: player.uid, wattHour, afterSignal, outcome: response.status });
          } catch (error) {
            attempts.push({ uid: player.uid, wattHour, afterSignal, outcome: networkCode(error) });
            if (signaled) return;
            throw error;
          }
          if (signaled) sinceSignal++;
        }
      };
      const workers = Promise.all(Array.from({ length: 8 }, (_, i) => worker(players[i % players.length])));

      while (attempts.filter((attempt) => attempt.outcome === 200).length < 40) await sleep(20);
      signaled = true;
      child.process.kill('SIGTERM');
      while (!(await refusesConnections(child.port))) await sleep(20);
      // The listener is closed; the request that was in flight still completes.
      slowRequest.end(slowBody.slice(20));

      await workers;
      expect(await slowAnswer).toEqual({ status: 200, body: { uid: slowPlayer.uid, wattHour: 999_999 } });
      expect(await socket.closed).toEqual({ code: 1001, reason: 'Service shutting down' });
      expect(await child.exited).toBe(0);

      // Every answer was a 200 or a refused/closed connection: nothing failed half-way (no 5xx).
      const outcomes = new Set(attempts.map((attempt) => attempt.outcome));
      for (const outcome of outcomes)
        expect([200, 'ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'other side closed']).toContain(outcome);
      expect(attempts.some((attempt) => attempt.afterSignal && attempt.outcome !== 200)).toBe(true);

      // Every acknowledged write is stored, including the one in flight at the signal.
      const stored = new Set((await storedHistory(database.env)).map((row) => `${row.uid}:${row.watt_hour}`));
      const acknowledged = attempts
        .filter((attempt) => attempt.outcome === 200)
        .map((attempt) => `${attempt.uid}:${attempt.wattHour}`);
      expect(acknowledged.filter((key) => !stored.has(key))).toEqual([]);
      expect(stored.has(`${slowPlayer.uid}:999999`)).toBe(true);
    } finally {
      await database.drop();
    }
  }, 180_000);
});
