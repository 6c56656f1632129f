import type { EventBus, ServiceEvent, ServiceEventHandler } from '../common/events/events';
import { SERVER_SESSION_CACHE_MS, ServerSessionCache } from './server-session.cache';
import type { ServerSessionLookup } from './session.repository';

class LocalBus implements EventBus {
  private readonly handlers = new Set<ServiceEventHandler>();
  publish(event: ServiceEvent): Promise<void> {
    for (const handler of this.handlers) handler(event);
    return Promise.resolve();
  }
  subscribe(handler: ServiceEventHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }
}

const live = (id: string): ServerSessionLookup => ({
  id,
  serverId: 1,
  tokenExpiresAt: new Date(Date.now() + 600_000),
  endedAt: null,
});

describe('ServerSessionCache', () => {
  let bus: LocalBus;
  let cache: ServerSessionCache;

  beforeEach(() => {
    bus = new LocalBus();
    cache = new ServerSessionCache(bus);
    cache.onModuleInit();
  });

  it('answers a remembered live session until SERVER_SESSION_CACHE_MS has passed', () => {
    cache.remember('h1', live('s1'), cache.ticket(), 1_000);
    expect(cache.get('h1', 1_000)?.id).toBe('s1');
    expect(cache.get('h1', 1_000 + SERVER_SESSION_CACHE_MS - 1)?.id).toBe('s1');
    expect(cache.get('h1', 1_000 + SERVER_SESSION_CACHE_MS)).toBeNull();
    expect(cache.get('h2', 1_000)).toBeNull();
  });

  it('never remembers an ended session', () => {
    cache.remember('h1', { ...live('s1'), endedAt: new Date() }, cache.ticket());
    expect(cache.get('h1')).toBeNull();
  });

  it('forgets a rotated token and the sessions of a server_session.ended event', async () => {
    cache.remember('h1', live('s1'), cache.ticket());
    cache.remember('h2', live('s2'), cache.ticket());
    cache.remember('h3', live('s3'), cache.ticket());
    cache.forgetToken('h1');
    await bus.publish({ type: 'server_session.ended', serverId: 1, sessionIds: ['s2'], reason: 'replaced' });
    expect([cache.get('h1'), cache.get('h2'), cache.get('h3')?.id]).toEqual([null, null, 's3']);
  });

  it('does not remember a lookup that began before a forget (its row may predate the logout)', () => {
    const ticket = cache.ticket();
    cache.forgetSessions(['s1']);
    cache.remember('h1', live('s1'), ticket);
    expect(cache.get('h1')).toBeNull();
    cache.remember('h1', live('s1'), cache.ticket());
    expect(cache.get('h1')?.id).toBe('s1');
  });

  it('stops listening when the module is destroyed', async () => {
    cache.onModuleDestroy();
    cache.remember('h1', live('s1'), cache.ticket());
    await bus.publish({ type: 'server_session.ended', serverId: 1, sessionIds: ['s1'], reason: 'logout' });
    expect(cache.get('h1')?.id).toBe('s1');
  });

  it('lets concurrent lookups of one token share a query, but not across a forget', async () => {
    let loads = 0;
    let release: (session: ServerSessionLookup) => void = () => undefined;
    const load = () =>
      new Promise<ServerSessionLookup | null>((resolve) => {
        loads++;
        release = resolve;
      });
    const first = cache.lookup('h1', load);
    const second = cache.lookup('h1', load);
    expect(loads).toBe(1);
    const before = release;
    cache.forgetSessions(['s1']);
    const third = cache.lookup('h1', load);
    expect(loads).toBe(2);
    before(live('s-old'));
    release(live('s1'));
    expect((await first)?.id).toBe('s-old');
    expect((await second)?.id).toBe('s-old');
    expect((await third)?.id).toBe('s1');
    // The lookup that ran across the forget is not remembered; the one started after it is.
    expect(cache.get('h1')?.id).toBe('s1');
    expect((await cache.lookup('h1', load))?.id).toBe('s1');
    expect(loads).toBe(2);
  });
});
