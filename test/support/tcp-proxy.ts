import { createServer, connect, Server, Socket } from 'node:net';

/**
 * A TCP proxy in front of a real server (PostgreSQL, Redis) that a test can break and mend:
 * - cut(): every open connection is destroyed and new ones are refused (the server is down);
 * - stall(): every open connection is destroyed, new ones are accepted but nothing is forwarded
 *   (a black-holed network: only timeouts notice);
 * - restore(): connections are forwarded again, on the same port (those still forwarded stay open);
 * - blackHoleOpen(): the connections open now stay open but carry nothing more either way (a
 *   network that silently drops their packets); new connections are forwarded as usual.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private readonly pairs = new Set<[Socket, Socket]>();
  private mode: 'forward' | 'stall' = 'forward';
  private server: Server;

  private constructor(
    private target: { host: string; port: number },
    readonly port: number,
    server: Server,
  ) {
    this.server = server;
  }

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    let proxy: TcpProxy | null = null;
    const server = createServer((socket) => proxy?.accept(socket));
    const port = await listen(server, 0);
    proxy = new TcpProxy(target, port, server);
    return proxy;
  }

  /** The URL with its host and port replaced by the proxy's. */
  rewrite(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  async cut(): Promise<void> {
    this.destroyAll();
    if (this.server.listening) await new Promise((resolve) => this.server.close(resolve));
  }

  async stall(): Promise<void> {
    this.mode = 'stall';
    this.destroyAll();
    await this.ensureListening();
  }

  async restore(): Promise<void> {
    this.mode = 'forward';
    this.destroyAll({ keepForwarding: true });
    await this.ensureListening();
  }

  /**
   * New connections go to `target` from now on; the open ones stay with the old one (a failover
   * that moved a DNS name: clients connected before it keep talking to the old node).
   */
  retarget(target: { host: string; port: number }): void {
    this.target = target;
  }

  blackHoleOpen(): void {
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      // Read and drop: nothing reaches the other side, and neither side sees the connection close.
      client.on('data', () => undefined);
      upstream.on('data', () => undefined);
    }
    this.pairs.clear();
  }

  async close(): Promise<void> {
    await this.cut();
  }

  private async ensureListening(): Promise<void> {
    if (this.server.listening) return;
    const server = createServer((socket) => this.accept(socket));
    await listen(server, this.port);
    this.server = server;
  }

  private accept(client: Socket): void {
    this.track(client);
    if (this.mode === 'stall') return;
    const upstream = connect(this.target);
    this.track(upstream);
    client.pipe(upstream).pipe(client);
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** keepForwarding: connections still forwarded stay open (stalled and black-holed ones do not). */
  private destroyAll(options: { keepForwarding?: boolean } = {}): void {
    const kept = new Set<Socket>(options.keepForwarding ? [...this.pairs].flat() : []);
    for (const socket of this.sockets) {
      if (kept.has(socket)) continue;
      socket.destroy();
      this.sockets.delete(socket);
    }
    if (!options.keepForwarding) this.pairs.clear();
  }
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as { port: number }).port);
    });
  });
}
