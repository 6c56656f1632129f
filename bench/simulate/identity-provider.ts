/**
 * A small Mojang-compatible identity provider for the simulator's ONLINE players
 * (`GET /session/minecraft/profile/{uuid without dashes}`, decisions.md §4). It is stateless:
 * every uuid is a genuine account whose name is derived from the uuid (onlineName), so a
 * provider started in another process, or on a fixed port that a deployment was configured
 * with, answers the same.
 */
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/** The account name of a uuid: `s_` and its last 14 hex digits (16 characters, a valid Minecraft name). */
export function onlineName(uuid: string): string {
  return `s_${uuid.replace(/-/g, '').toLowerCase().slice(-14)}`;
}

export interface IdentityProvider {
  url: string;
  lookups(): number;
  stop(): Promise<void>;
}

export async function startIdentityProvider(port = 0, host = '127.0.0.1'): Promise<IdentityProvider> {
  let lookups = 0;
  const server: Server = createServer((req, res) => {
    const match = /^\/session\/minecraft\/profile\/([0-9a-fA-F]{32})$/.exec(req.url ?? '');
    if (req.method !== 'GET' || !match) {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"Not Found"}');
      return;
    }
    lookups++;
    const id = match[1].toLowerCase();
    res
      .writeHead(200, { 'Content-Type': 'application/json' })
      .end(JSON.stringify({ id, name: onlineName(id), properties: [] }));
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    lookups: () => lookups,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
