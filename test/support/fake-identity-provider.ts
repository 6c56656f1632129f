import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

export interface RecordedLookup {
  path: string;
  authorization: string | undefined;
}

/**
 * A real HTTP server speaking the Mojang-compatible profile lookup
 * (`GET /session/minecraft/profile/{uuid without dashes}`), started by the tests.
 */
export class FakeIdentityProvider {
  private server: Server | null = null;
  private readonly profiles = new Map<string, { id: string; name: string }>();
  private readonly behaviours = new Map<string, 'hang' | 'error' | 'garbage' | 'missing' | 'redirect'>();
  private readonly hanging = new Set<ServerResponse>();
  private readonly held = new Map<string, Array<() => void>>();
  readonly lookups: RecordedLookup[] = [];
  url = '';

  /** Registers a genuine account. */
  addAccount(uuid: string, name: string): void {
    this.profiles.set(uuid.replace(/-/g, '').toLowerCase(), { id: uuid.replace(/-/g, '').toLowerCase(), name });
  }

  /** Makes lookups of this uuid never answer, answer 500, malformed JSON, 404, or 307 to /moved/… (which answers normally). */
  misbehave(uuid: string, behaviour: 'hang' | 'error' | 'garbage' | 'missing' | 'redirect'): void {
    this.behaviours.set(uuid.replace(/-/g, '').toLowerCase(), behaviour);
  }

  /**
   * Holds the lookups of this uuid (no answer yet) until the function returned is called; they are
   * then answered normally, as later ones are.
   */
  hold(uuid: string): () => void {
    const key = uuid.replace(/-/g, '').toLowerCase();
    this.held.set(key, []);
    return () => {
      const waiting = this.held.get(key) ?? [];
      this.held.delete(key);
      for (const answer of waiting) answer();
    };
  }

  /** Lookups of this uuid are answered normally again. */
  behave(uuid: string): void {
    this.behaviours.delete(uuid.replace(/-/g, '').toLowerCase());
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.lookups.push({ path: req.url ?? '', authorization: req.headers.authorization });
    const match = /^(\/moved)?\/session\/minecraft\/profile\/([0-9a-f]{32})$/.exec(req.url ?? '');
    if (!match) {
      res.writeHead(404).end();
      return;
    }
    const key = match[2];
    const behaviour = match[1] ? undefined : this.behaviours.get(key);
    if (behaviour === 'redirect') {
      res.writeHead(307, { Location: `/moved${req.url}` }).end();
      return;
    }
    if (behaviour === 'hang') {
      this.hanging.add(res);
      return;
    }
    if (behaviour === 'error') {
      res.writeHead(500).end('oops');
      return;
    }
    if (behaviour === 'missing') {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"Not Found"}');
      return;
    }
    if (behaviour === 'garbage') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{not json');
      return;
    }
    const held = this.held.get(key);
    if (held) {
      held.push(() => this.answer(key, res));
      return;
    }
    this.answer(key, res);
  }

  private answer(key: string, res: ServerResponse): void {
    const profile = this.profiles.get(key);
    if (!profile) {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ ...profile, properties: [] }));
  }
}
