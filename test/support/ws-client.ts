import WebSocket from 'ws';

export interface Frame {
  event: string;
  data: any;
}

export interface Closed {
  code: number;
  reason: string;
}

/** A real `ws` client speaking the plugin's frames, recording everything it receives. */
export class WsClient {
  readonly frames: Frame[] = [];
  readonly closed: Promise<Closed>;
  private waiters: Array<() => void> = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data: WebSocket.RawData) => {
      this.frames.push(JSON.parse(Buffer.from(data as Buffer).toString('utf8')) as Frame);
      this.notify();
    });
    this.closed = new Promise((resolve) =>
      socket.on('close', (code, reason) => {
        resolve({ code, reason: reason.toString() });
        this.notify();
      }),
    );
  }

  static connect(baseUrl: string, token: string | null): Promise<WsClient> {
    const url = `${baseUrl.replace(/^http/, 'ws')}/ws`;
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers: token === null ? {} : { Authorization: `Bearer ${token}` } });
      const client = new WsClient(socket);
      socket.once('open', () => resolve(client));
      socket.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () =>
          reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode, body })),
        );
      });
      socket.once('error', reject);
    });
  }

  /** Connects expecting the upgrade to be refused; answers the HTTP status and body. */
  static async refused(baseUrl: string, token: string | null): Promise<{ status: number; body: unknown }> {
    try {
      const client = await WsClient.connect(baseUrl, token);
      client.socket.terminate();
    } catch (error) {
      const { status, body } = error as { status?: number; body?: string };
      if (status !== undefined) return { status, body: body ? JSON.parse(body) : null };
      throw error;
    }
    throw new Error('the upgrade was accepted');
  }

  send(event: string, data: unknown): void {
    this.socket.send(JSON.stringify({ event, data }));
  }

  sendRaw(text: string): void {
    this.socket.send(text);
  }

  /** Waits for the first received frame (from index `from`) matching the predicate. */
  async next(predicate: (frame: Frame) => boolean, timeoutMs = 5000, from = 0): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.slice(from).find(predicate);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Sends a frame and waits for the next frame of `event` received after it. */
  async request(event: string, data: unknown, answerEvent = event): Promise<Frame> {
    const from = this.frames.length;
    this.send(event, data);
    return this.next((frame) => frame.event === answerEvent, 5000, from);
  }

  close(): void {
    this.socket.close();
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
