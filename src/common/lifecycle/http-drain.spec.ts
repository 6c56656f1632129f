import { Agent, createServer, get, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo, connect } from 'node:net';
import { HttpDrain } from './http-drain';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

async function serve(handler: Handler): Promise<{ server: Server; drain: HttpDrain; port: number }> {
  const server = createServer(handler);
  const drain = new HttpDrain(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, drain, port: (server.address() as AddressInfo).port };
}

function fetchText(
  port: number,
  path: string,
  agent: Agent,
): Promise<{ status: number; connection: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, connection: response.headers.connection, text }),
      );
    }).on('error', reject);
  });
}

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

const openConnections = (server: Server) =>
  new Promise<number>((resolve, reject) =>
    server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );

describe('HttpDrain', () => {
  it('refuses new connections, lets the request in flight finish with Connection: close, and closes idle keep-alive connections', async () => {
    let finish!: () => void;
    const { server, drain, port } = await serve((request, response) => {
      if (request.url === '/slow') finish = () => response.end('slow done');
      else response.end('quick');
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    try {
      // An idle keep-alive connection, and a request in flight.
      expect((await fetchText(port, '/quick', agent)).connection).toBe('keep-alive');
      const slow = fetchText(port, '/slow', agent);
      while (!finish) await new Promise((resolve) => setImmediate(resolve));

      const drained = drain.drain(60_000);
      expect(await refused(port)).toBe(true);
      finish();
      expect(await slow).toEqual({ status: 200, connection: 'close', text: 'slow done' });
      expect(await drained).toEqual({ cut: 0 });
      // Every connection is gone, the idle keep-alive one included.
      while ((await openConnections(server)) > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      agent.destroy();
    }
  });

  it('closes the connections of requests still running at the bound', async () => {
    let arrived!: () => void;
    const received = new Promise<void>((resolve) => (arrived = resolve));
    const { server, drain, port } = await serve(() => arrived());
    const agent = new Agent({ keepAlive: false });
    try {
      const hanging = fetchText(port, '/never', agent).then(
        () => 'answered',
        (error: NodeJS.ErrnoException) => error.code,
      );
      await received;
      expect(await drain.drain(100)).toEqual({ cut: 1 });
      expect(await hanging).toBe('ECONNRESET');
      while ((await openConnections(server)) > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      agent.destroy();
    }
  });
});
