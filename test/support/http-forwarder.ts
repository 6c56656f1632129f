import { createServer, IncomingMessage, request, Server } from 'node:http';
import { AddressInfo, connect, Socket } from 'node:net';

/**
 * A reverse proxy as the TLS-terminating proxy of docs/operations.md would be, in front of a test
 * service: forwards every request and WebSocket upgrade to the target and appends the address of
 * the connection it came from to `X-Forwarded-For`. Clients that connect from different loopback
 * addresses (127.0.0.2, 127.0.0.3, …: `localAddress`) are different callers behind one proxy.
 */
export class HttpForwarder {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<HttpForwarder> {
    const server = createServer((incoming, outgoing) => {
      const upstream = request(
        {
          host: '127.0.0.1',
          port: targetPort,
          method: incoming.method,
          path: incoming.url,
          headers: { ...incoming.headers, 'x-forwarded-for': forwardedFor(incoming) },
        },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      upstream.on('error', () => outgoing.destroy());
      incoming.pipe(upstream);
    });
    server.on('upgrade', (incoming: IncomingMessage, socket: Socket, head: Buffer) => {
      const upstream = connect(targetPort, '127.0.0.1', () => {
        const lines = [`${incoming.method} ${incoming.url} HTTP/1.1`];
        for (let i = 0; i < incoming.rawHeaders.length; i += 2) {
          if (incoming.rawHeaders[i].toLowerCase() !== 'x-forwarded-for')
            lines.push(`${incoming.rawHeaders[i]}: ${incoming.rawHeaders[i + 1]}`);
        }
        lines.push(`X-Forwarded-For: ${forwardedFor(incoming)}`);
        upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
        upstream.write(head);
        socket.pipe(upstream).pipe(socket);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    const forwarder = await new Promise<HttpForwarder>((resolve) => {
      server.listen(0, '127.0.0.1', () => resolve(new HttpForwarder(server, (server.address() as AddressInfo).port)));
    });
    server.on('connection', (socket: Socket) => {
      forwarder.sockets.add(socket);
      socket.once('close', () => forwarder.sockets.delete(socket));
    });
    return forwarder;
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function forwardedFor(incoming: IncomingMessage): string {
  const previous = incoming.headers['x-forwarded-for'];
  const peer = (incoming.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  return previous ? `${String(previous)}, ${peer}` : peer;
}

export interface ForwardedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** One JSON request to the forwarder from the given local (loopback) address. */
export function requestFrom(
  localAddress: string,
  port: number,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<ForwardedResponse> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
  if (payload !== undefined) headers['Content-Type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: '127.0.0.1', port, localAddress, method, path, headers, agent: false },
      (answer) => {
        let text = '';
        answer.setEncoding('utf8');
        answer.on('data', (chunk: string) => (text += chunk));
        answer.on('end', () => {
          const json = (answer.headers['content-type'] ?? '').includes('application/json') && text.length > 0;
          resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body: json ? JSON.parse(text) : text });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}
