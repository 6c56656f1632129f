import { createServer, IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPlayer, onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer, TestServerSession } from '../factories/server.factory';
import { defineCharts, gameplayPayload } from '../factories/upload.factory';
import { multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';
import { eventually, sleep } from '../support/wait';
import { WsClient } from '../support/ws-client';
import { DeliveryAgents, sendDelivery } from '../../src/webhooks/webhook-sender';
import { verifyDelivery } from '../../src/webhooks/webhook-signature';
import { badLines } from '../support/bad-request';
import { LogCapture } from '../support/log-capture';
import { WebhookDispatcher } from '../../src/webhooks/webhook-dispatcher.service';
import type { Worker } from 'node:worker_threads';

/**
 * Outgoing webhooks (issue #45; docs/decisions.md "Webhooks") against a real HTTP receiver started
 * here: the signature a receiver checks, events written in the transaction of their change (a
 * ban, an unban, uploads through the triggers, a void), retries after 500s and timeouts with the
 * same delivery id, the refused addresses (loopback is allowed for these tests through
 * WEBHOOK_ALLOWED_NETWORKS, the operator setting, except where a test asks for the default), the
 * Discord preset's shape, an outage of the receiver, the delivery log, the secret shown once, and
 * two instances sharing one outbox.
 */

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  json: Record<string, any>;
  at: number;
  /** The sender's port: one per connection. */
  port: number;
  request: IncomingMessage;
}

type Behaviour = (request: Received, response: ServerResponse) => void;

/** A receiver on 127.0.0.1: records every request, answers as `behave` says (200 by default). */
class Receiver {
  readonly received: Received[] = [];
  behave: Behaviour = (_request, response) => response.end('ok');
  private server: Server | null = null;
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = createServer((request: IncomingMessage, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        const entry = {
          headers: request.headers,
          body,
          json: JSON.parse(body) as Record<string, any>,
          at: Date.now(),
          port: request.socket.remotePort ?? 0,
          request,
        };
        this.received.push(entry);
        this.behave(entry, response);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  of(type: string): Received[] {
    return this.received.filter((entry) => entry.headers['x-rhythmc-event'] === type);
  }
}

const FAST = {
  WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_RETRY_BASE_MS: '100',
  WEBHOOK_TIMEOUT_SECONDS: '1',
};

let clock = Date.now() - 3_600_000;
const nextTime = () => (clock += 1_000);

async function upload(
  app: TestApp,
  server: TestServerSession,
  player: TestPlayerSession,
  levelID: number,
  overrides: Record<string, unknown> = {},
): Promise<void> {
  const payload = gameplayPayload(levelID, nextTime(), overrides);
  const response = await app.http.post(
    '/player/upload',
    {
      player: { playerUID: player.uid, accessToken: player.accessToken, timestamp: payload.time + 250 },
      server: { serverID: server.serverID, serverName: server.body.serverName as string, country: 'DE' },
      payload,
    },
    { token: server.accessToken },
  );
  if (response.status !== 200) throw new Error(`upload: ${response.status} ${response.text}`);
}

async function register(
  app: TestApp,
  body: { url: string; events: string[]; format?: string; atpTop?: number; name?: string },
): Promise<{ id: number; secret: string }> {
  const response = await app.admin.post('/admin/webhooks', { name: 'test', ...body });
  if (response.status !== 201) throw new Error(`register: ${response.status} ${response.text}`);
  return response.body as { id: number; secret: string };
}

/** The samples of /metrics whose name starts with `prefix`: `name{labels}` → value. */
async function metricsOf(app: TestApp, prefix: string): Promise<Record<string, number>> {
  const response = await app.http.get('/metrics', { token: null });
  if (response.status !== 200) throw new Error(`metrics: ${response.status}`);
  const samples: Record<string, number> = {};
  for (const [, key, value] of response.text.matchAll(/^(\S+) (\S+)$/gm))
    if (key.startsWith(prefix)) samples[key] = Number(value);
  return samples;
}

const deliveries = async (app: TestApp, id: number) =>
  (await app.admin.get(`/admin/webhooks/${id}/deliveries`)).body.items as Array<Record<string, any>>;

describe('Webhooks', () => {
  let app: TestApp;
  let receiver: Receiver;
  let server: TestServerSession;

  beforeAll(async () => {
    receiver = new Receiver();
    await receiver.start();
    app = await startTestApp({ env: FAST });
    server = await onlineServer(app);
    await defineCharts(app, [801, 802, 803]);
  });

  afterAll(async () => {
    await app?.close();
    await receiver?.stop();
  });

  beforeEach(async () => {
    receiver.received.length = 0;
    receiver.behave = (_request, response) => response.end('ok');
    await app.sql('DELETE FROM webhook');
  });

  it('shows the secret once, never in the list or the audit log, and refuses bad bodies with 400', async () => {
    const created = await app.admin.post('/admin/webhooks', {
      name: 'ops',
      url: receiver.url(),
      events: ['player.banned', 'player.unbanned'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      name: 'ops',
      url: receiver.url(),
      events: ['player.banned', 'player.unbanned'],
      format: 'json',
      atpTop: 10,
      enabled: true,
      disabledReason: null,
      failingSince: null,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/),
      previousSecretExpiresAt: null,
      pending: 0,
      failed: 0,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    });
    const secret = created.body.secret as string;
    const list = await app.admin.get('/admin/webhooks');
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(secret);
    expect(list.body.items).toHaveLength(1);
    const audit = await app.sql<{ action: string; summary: unknown }>(
      'SELECT action, summary FROM admin_audit WHERE target = $1 ORDER BY id',
      [`webhook:${created.body.id}`],
    );
    expect(audit).toEqual([
      {
        action: 'webhook.create',
        summary: { name: 'ops', events: ['player.banned', 'player.unbanned'], urlChanged: true },
      },
    ]);
    expect(JSON.stringify(audit)).not.toContain(secret);

    for (const [body, message] of [
      [{ name: 'x', url: 'ftp://example.com/', events: ['player.banned'] }, /^url must be an http or https URL/],
      [{ name: ' \t', url: 'https://example.com/', events: ['player.banned'] }, /^name must hold a visible character/],
      [{ name: 'x', url: 'https://user:pw@example.com/', events: ['player.banned'] }, /without user or password/],
      [{ name: 'x', url: 'https://example.com/', events: ['player.nope'] }, /^events must be a non-empty list/],
      [{ name: 'x', url: 'https://example.com/', events: [] }, /^events must be a non-empty list/],
      [
        { name: 'x', url: 'https://example.com/', events: ['player.banned'], format: 'slack' },
        /^format must be one of/,
      ],
      [
        { name: 'x', url: 'https://example.com/', events: ['player.banned'], secret: 'mine' },
        /secret should not exist/,
      ],
    ] as const) {
      const response = await app.admin.post('/admin/webhooks', body);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('BAD_REQUEST');
      expect(String(response.body.message)).toMatch(message);
    }
    expect(await app.sql('SELECT id FROM webhook')).toHaveLength(1);
    expect((await app.admin.request('PATCH', '/admin/webhooks/999999', { body: { name: 'y' } })).status).toBe(404);
    // The list takes no parameter: an unknown one is 400, as on every other list.
    const listed = await app.admin.get('/admin/webhooks', { query: { limit: 1 } });
    expect({ status: listed.status, body: listed.body }).toEqual({
      status: 400,
      body: badLines('limit: property limit should not exist'),
    });
    // null is no value for a field of a PATCH (a null url answered 500): 400, the webhook unchanged.
    const [kept] = await app.sql<{ id: number }>('SELECT id, name, url, events, format, atp_top, enabled FROM webhook');
    for (const field of ['name', 'url', 'events', 'format', 'atpTop', 'enabled']) {
      const refused = await app.admin.request('PATCH', `/admin/webhooks/${kept.id}`, { body: { [field]: null } });
      expect({
        field,
        status: refused.status,
        error: refused.body.error,
        fields: [...new Set((refused.body.errors as { field: string }[]).map((e) => e.field))],
      }).toEqual({
        field,
        status: 400,
        error: 'BAD_REQUEST',
        fields: [field],
      });
    }
    expect(await app.sql('SELECT id, name, url, events, format, atp_top, enabled FROM webhook')).toEqual([kept]);
    expect((await app.admin.delete('/admin/webhooks/999999')).status).toBe(404);
    expect((await app.admin.get('/admin/webhooks/999999/deliveries')).status).toBe(404);
  });

  it('signs a ban and an unban, written with the change; the receiver verifies and dedupes on the delivery id', async () => {
    const { id, secret } = await register(app, { url: receiver.url(), events: ['player.banned', 'player.unbanned'] });
    const player = await createPlayer(app);
    expect((await app.admin.post(`/admin/players/${player.uid}/ban`, { reason: 'cheating' })).status).toBe(200);
    expect((await app.admin.delete(`/admin/players/${player.uid}/ban`)).status).toBe(204);
    // A second unban lifts nothing: no event.
    expect((await app.admin.delete(`/admin/players/${player.uid}/ban`)).status).toBe(204);
    await eventually(() => receiver.received.length >= 2, 'two deliveries');
    await sleep(300);
    expect(receiver.received.map((entry): unknown => entry.json.type)).toEqual(['player.banned', 'player.unbanned']);
    const [banned, unbanned] = receiver.received;
    const now = Math.floor(Date.now() / 1000);
    for (const entry of [banned, unbanned]) {
      const headers = {
        signature: entry.headers['x-rhythmc-signature'] as string,
        timestamp: entry.headers['x-rhythmc-timestamp'] as string,
      };
      expect(verifyDelivery(secret, headers, entry.body, now)).toBe(true);
      // Tampered body, wrong secret, a replay an hour later: refused.
      expect(verifyDelivery(secret, headers, entry.body.replace('"', ' "'), now)).toBe(false);
      expect(verifyDelivery(`${secret}x`, headers, entry.body, now)).toBe(false);
      expect(verifyDelivery(secret, headers, entry.body, now + 3_600)).toBe(false);
      expect(entry.headers['x-rhythmc-delivery']).toBe(entry.json.id);
      expect(entry.headers['content-type']).toBe('application/json');
    }
    expect(banned.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      eventId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'player.banned',
      createdAt: expect.stringMatching(/Z$/),
      data: { player: { uid: player.uid, username: player.username }, reason: 'cheating', until: null },
    });
    expect(unbanned.json.data).toEqual({ player: { uid: player.uid, username: player.username } });
    const log = await deliveries(app, id);
    expect(log.map((row): unknown[] => [row.type, row.state, row.attempts, row.lastStatus, row.lastError])).toEqual([
      ['player.unbanned', 'delivered', 1, 200, null],
      ['player.banned', 'delivered', 1, 200, null],
    ]);
  });

  it('rotates a secret: shown once, audited, the old one signing beside it until the overlap ends', async () => {
    const { id, secret: first } = await register(app, { url: receiver.url(), events: ['player.banned'] });
    const rotated = await app.admin.post(`/admin/webhooks/${id}/secret`, { overlapSeconds: 3_600 });
    expect(rotated.status).toBe(201);
    const second = rotated.body.secret as string;
    expect(second).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(second).not.toBe(first);
    expect(rotated.body).toMatchObject({ id, enabled: true, previousSecretExpiresAt: expect.any(String) });
    const [stored] = await app.sql<{ secret: string; previous_secret: string; overlap: number }>(
      `SELECT secret, previous_secret, round(extract(epoch FROM previous_secret_expires_at - now()))::int AS overlap
         FROM webhook WHERE id = $1`,
      [id],
    );
    expect(stored).toEqual({ secret: second, previous_secret: first, overlap: expect.any(Number) });
    expect(stored.overlap).toBeGreaterThan(3_590);
    expect(stored.overlap).toBeLessThanOrEqual(3_600);
    const list = await app.admin.get('/admin/webhooks');
    expect(list.body.items[0].previousSecretExpiresAt).toBe(rotated.body.previousSecretExpiresAt);
    expect(list.text).not.toContain(first);
    expect(list.text).not.toContain(second);

    // During the overlap: two signatures, the new secret's first; a receiver with either verifies.
    const player = await createPlayer(app);
    await app.admin.post(`/admin/players/${player.uid}/ban`, {});
    await eventually(() => receiver.received.length === 1, 'a delivery during the overlap');
    const during = receiver.received[0];
    const duringHeaders = {
      signature: during.headers['x-rhythmc-signature'] as string,
      timestamp: during.headers['x-rhythmc-timestamp'] as string,
    };
    expect(duringHeaders.signature).toMatch(/^sha256=[0-9a-f]{64},sha256=[0-9a-f]{64}$/);
    const now = Math.floor(Date.now() / 1000);
    expect(verifyDelivery(second, duringHeaders, during.body, now)).toBe(true);
    expect(verifyDelivery(first, duringHeaders, during.body, now)).toBe(true);
    expect(verifyDelivery(`${first}x`, duringHeaders, during.body, now)).toBe(false);
    expect(verifyDelivery(second, duringHeaders, during.body.replace('"', ' "'), now)).toBe(false);

    // Without an overlap (or once it ended) only the current secret signs.
    const third = await app.admin.post(`/admin/webhooks/${id}/secret`, { overlapSeconds: 0 });
    expect(third.status).toBe(201);
    expect(third.body.previousSecretExpiresAt).toBeNull();
    expect(
      await app.sql('SELECT previous_secret, previous_secret_expires_at FROM webhook WHERE id = $1', [id]),
    ).toEqual([{ previous_secret: null, previous_secret_expires_at: null }]);
    await app.admin.delete(`/admin/players/${player.uid}/ban`);
    await app.admin.post(`/admin/players/${player.uid}/ban`, {});
    await eventually(() => receiver.received.length === 2, 'a delivery after the rotation');
    const after = receiver.received[1];
    const afterHeaders = {
      signature: after.headers['x-rhythmc-signature'] as string,
      timestamp: after.headers['x-rhythmc-timestamp'] as string,
    };
    expect(afterHeaders.signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifyDelivery(third.body.secret as string, afterHeaders, after.body, now)).toBe(true);
    expect(verifyDelivery(second, afterHeaders, after.body, now)).toBe(false);
    // An expired overlap signs no more, whatever the row still holds.
    await app.sql(
      "UPDATE webhook SET previous_secret = $2, previous_secret_expires_at = now() - interval '1 second' WHERE id = $1",
      [id, first],
    );
    expect((await app.admin.get('/admin/webhooks')).body.items[0].previousSecretExpiresAt).toBeNull();
    await app.admin.post(`/admin/players/${(await createPlayer(app)).uid}/ban`, {});
    await eventually(() => receiver.received.length === 3, 'a delivery after the overlap');
    expect(receiver.received[2].headers['x-rhythmc-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    // The sweep forgets it: a replaced secret is not kept past its overlap.
    await app.get(WebhookDispatcher).sweep();
    expect(
      await app.sql('SELECT previous_secret, previous_secret_expires_at FROM webhook WHERE id = $1', [id]),
    ).toEqual([{ previous_secret: null, previous_secret_expires_at: null }]);

    // The default overlap is a day (here with no body at all, the same as {}); the audit rows keep
    // the overlap, never a secret.
    const fourth = await app.admin.post(`/admin/webhooks/${id}/secret`);
    expect(fourth.status).toBe(201);
    const [{ overlap }] = await app.sql<{ overlap: number }>(
      'SELECT round(extract(epoch FROM previous_secret_expires_at - now()))::int AS overlap FROM webhook WHERE id = $1',
      [id],
    );
    expect(overlap).toBeGreaterThan(86_390);
    expect(overlap).toBeLessThanOrEqual(86_400);
    const audit = await app.sql<{ action: string; summary: unknown }>(
      "SELECT action, summary FROM admin_audit WHERE target = $1 AND action = 'webhook.secret' ORDER BY id",
      [`webhook:${id}`],
    );
    expect(audit).toEqual([
      { action: 'webhook.secret', summary: { overlapSeconds: 3_600 } },
      { action: 'webhook.secret', summary: { overlapSeconds: 0 } },
      { action: 'webhook.secret', summary: { overlapSeconds: 86_400 } },
    ]);
    for (const secret of [first, second, third.body.secret as string, fourth.body.secret as string])
      expect(JSON.stringify(await app.sql('SELECT summary FROM admin_audit'))).not.toContain(secret);

    // Bad input: 400, nothing changed; an unknown webhook: 404.
    const [before] = await app.sql<{ secret: string }>('SELECT secret FROM webhook WHERE id = $1', [id]);
    for (const body of [
      { overlapSeconds: -1 },
      { overlapSeconds: 604_801 },
      { overlapSeconds: 1.5 },
      { overlapSeconds: '60' },
      { overlapSeconds: null },
      { secret: 'mine' },
    ]) {
      const refused = await app.admin.post(`/admin/webhooks/${id}/secret`, body);
      expect({ body, status: refused.status, error: refused.body.error }).toEqual({
        body,
        status: 400,
        error: 'BAD_REQUEST',
      });
    }
    expect(await app.sql('SELECT secret FROM webhook WHERE id = $1', [id])).toEqual([before]);
    expect((await app.admin.post('/admin/webhooks/999999/secret', {})).status).toBe(404);
  });

  it('writes nothing when the change rolls back, and nothing for an event the webhook did not ask for', async () => {
    await register(app, { url: receiver.url(), events: ['player.unbanned'] });
    expect((await app.admin.post('/admin/players/987654321/ban', { reason: 'x' })).status).toBe(404);
    const player = await createPlayer(app);
    expect((await app.admin.post(`/admin/players/${player.uid}/ban`, {})).status).toBe(200);
    await sleep(500);
    expect(receiver.received).toEqual([]);
    expect(await app.sql('SELECT id FROM webhook_delivery')).toEqual([]);
  });

  it('reports personal bests, first places, flagged and voided plays from uploads and reviews', async () => {
    await register(app, {
      url: receiver.url(),
      events: ['player.personal_best', 'chart.first_place', 'play.flagged', 'play.voided', 'player.atp_top'],
      atpTop: 2,
    });
    const alice = await onlinePlayer(app, server);
    const bob = await onlinePlayer(app, server);
    await upload(app, server, alice, 801, { acc: 95 });
    await upload(app, server, bob, 801, { acc: 97 });
    await upload(app, server, alice, 801, { acc: 96 }); // a best, not first
    await upload(app, server, alice, 801, { acc: 90 }); // not a best: nothing
    await eventually(() => receiver.of('player.personal_best').length >= 3, 'three personal bests');
    await eventually(() => receiver.of('chart.first_place').length >= 2, 'two first places');
    await sleep(300);
    expect(
      receiver.of('player.personal_best').map((entry): unknown[] => [entry.json.data.player.uid, entry.json.data.acc]),
    ).toEqual(
      expect.arrayContaining([
        [alice.uid, 95],
        [bob.uid, 97],
        [alice.uid, 96],
      ]),
    );
    expect(receiver.of('player.personal_best')).toHaveLength(3);
    const firsts = receiver.of('chart.first_place').map((entry): unknown => entry.json.data);
    expect(firsts).toEqual([
      {
        player: { uid: alice.uid, username: alice.username },
        chart: { levelId: 801, name: 'Chart 801' },
        acc: 95,
        playId: expect.any(String),
        previous: null,
      },
      {
        player: { uid: bob.uid, username: bob.username },
        chart: { levelId: 801, name: 'Chart 801' },
        acc: 97,
        playId: expect.any(String),
        previous: { player: { uid: alice.uid, username: alice.username }, acc: 95 },
      },
    ]);
    // Both entered the top 2 of ATP on their first counted play.
    expect(
      receiver.of('player.atp_top').map((entry): unknown[] => [entry.json.data.player.uid, entry.json.data.top]),
    ).toEqual([
      [alice.uid, 2],
      [bob.uid, 2],
    ]);

    // A play in the future fails a check: flagged, not a best.
    receiver.received.length = 0;
    await upload(app, server, alice, 802, { time: Date.now() + 3_600_000 });
    await eventually(() => receiver.of('play.flagged').length === 1, 'a flagged play');
    const flagged = receiver.of('play.flagged')[0].json.data;
    expect(flagged.flags.length).toBeGreaterThan(0);
    expect(flagged.player).toEqual({ uid: alice.uid, username: alice.username });
    const voided = await app.admin.post(`/admin/plays/${flagged.playId as string}/void`, { reason: 'too early' });
    expect(voided.status).toBe(200);
    await eventually(() => receiver.of('play.voided').length === 1, 'a voided play');
    expect(receiver.of('play.voided')[0].json.data).toMatchObject({ playId: flagged.playId, reason: 'too early' });
    await sleep(300);
    expect(receiver.of('player.personal_best')).toEqual([]);
  });

  it('retries after 500s and a timeout under the same delivery id, and logs each failure', async () => {
    const { id } = await register(app, { url: receiver.url(), events: ['player.banned'] });
    let calls = 0;
    receiver.behave = (_request, response) => {
      calls++;
      if (calls <= 2) {
        response.statusCode = 500;
        response.end('no');
      } else if (calls === 3) {
        setTimeout(() => response.end('late'), 2_500); // past WEBHOOK_TIMEOUT_SECONDS (1)
      } else response.end('ok');
    };
    const player = await createPlayer(app);
    await app.admin.post(`/admin/players/${player.uid}/ban`, {});
    await eventually(
      async () => (await deliveries(app, id))[0]?.state === 'delivered',
      'delivered after retries',
      20_000,
    );
    const [row] = await deliveries(app, id);
    expect(row).toMatchObject({ state: 'delivered', attempts: 4, lastStatus: 200, lastError: null });
    const ids = new Set(receiver.received.map((entry) => entry.headers['x-rhythmc-delivery']));
    expect(ids).toEqual(new Set([row.id]));
    // Each attempt signed afresh; the gaps grow (100 ms base, doubling).
    const timestamps = receiver.received.map((entry) => entry.at);
    expect(timestamps[2] - timestamps[1]).toBeGreaterThanOrEqual(timestamps[1] - timestamps[0] - 50);

    receiver.behave = (_request, response) => {
      response.statusCode = 503;
      response.end();
    };
    await app.admin.post(`/admin/players/${player.uid}/ban`, {});
    await eventually(async () => (await deliveries(app, id))[0]?.attempts >= 2, 'two failed attempts');
    const [failing] = await deliveries(app, id);
    expect(failing).toMatchObject({ state: 'pending', lastStatus: 503, lastError: 'HTTP 503' });
    expect((await app.admin.get('/admin/webhooks')).body.items[0].failingSince).toEqual(expect.any(String));
  });

  it('erasing a player deletes the deliveries that name them, and only those', async () => {
    const { id } = await register(app, { url: receiver.url(), events: ['player.banned'] });
    const erased = await createPlayer(app);
    const other = await createPlayer(app);
    for (const player of [erased, other]) await app.admin.post(`/admin/players/${player.uid}/ban`, {});
    await eventually(
      async () => (await deliveries(app, id)).filter((row) => row.state === 'delivered').length === 2,
      'two deliveries',
    );
    expect((await app.admin.post(`/admin/players/${erased.uid}/erase`, { confirm: erased.username })).status).toBe(200);
    expect((await deliveries(app, id)).map((row): unknown => row.data.player.uid)).toEqual([other.uid]);
  });

  it('delivers the Discord preset as an embed message, names escaped', async () => {
    await register(app, { url: receiver.url(), events: ['player.banned'], format: 'discord' });
    const player = await createPlayer(app, { username: `x_${Date.now() % 100000}` });
    await app.admin.post(`/admin/players/${player.uid}/ban`, { reason: '@everyone *bold*' });
    await eventually(() => receiver.received.length === 1, 'a Discord message');
    const message = receiver.received[0].json;
    expect(message).toEqual({
      username: 'rhythmc',
      allowed_mentions: { parse: [] },
      embeds: [
        {
          title: 'Player banned',
          description: `**${player.username.replace(/_/g, '\\_')}**: \\@everyone \\*bold\\*`,
          color: 0xe74c3c,
          timestamp: expect.stringMatching(/Z$/),
          footer: { text: `player.banned · ${receiver.received[0].headers['x-rhythmc-delivery'] as string}` },
          fields: [],
        },
      ],
    });
  });

  it('loses nothing while the receiver is down and delivers each event once it is back', async () => {
    const { id } = await register(app, { url: receiver.url(), events: ['player.banned'] });
    const port = receiver.port;
    await receiver.stop();
    const players = await Promise.all([1, 2, 3, 4, 5].map(() => createPlayer(app)));
    for (const player of players) await app.admin.post(`/admin/players/${player.uid}/ban`, {});
    await eventually(
      async () =>
        (await deliveries(app, id)).every((row) => row.attempts >= 2 && /connection failed/.test(row.lastError)),
      'failed attempts while down',
    );
    const down = await metricsOf(app, 'rhythmc_webhook_outbox');
    expect(down['rhythmc_webhook_outbox_deliveries{state="pending"}']).toBe(5);
    expect(down['rhythmc_webhook_outbox_oldest_seconds{measure="pending"}']).toBeGreaterThan(0);
    await receiver.start(port);
    await eventually(
      async () => (await deliveries(app, id)).every((row) => row.state === 'delivered'),
      'all delivered after the outage',
      30_000,
    );
    await sleep(500);
    const uids = receiver.received.map((entry) => entry.json.data.player.uid as number);
    expect(uids.sort()).toEqual(players.map((player) => player.uid).sort());
    expect(new Set(receiver.received.map((entry): unknown => entry.json.id)).size).toBe(5);
  });

  it('turns off a webhook failing too long, with an audit row, and keeps its deliveries for when it is on again', async () => {
    const strict = await startTestApp({ env: { ...FAST, WEBHOOK_DISABLE_AFTER_SECONDS: '1' } });
    try {
      const { id } = await register(strict, { url: receiver.url(), events: ['player.banned'] });
      receiver.behave = (_request, response) => {
        response.statusCode = 500;
        response.end();
      };
      const player = await createPlayer(strict);
      await strict.admin.post(`/admin/players/${player.uid}/ban`, {});
      await eventually(
        async () => (await strict.admin.get('/admin/webhooks')).body.items[0].enabled === false,
        'turned off',
      );
      const [webhook] = (await strict.admin.get('/admin/webhooks')).body.items;
      expect(webhook.disabledReason).toMatch(/^every attempt failed for over 1 s \(last: HTTP 500\)$/);
      expect(
        await strict.sql("SELECT action, target, actor FROM admin_audit WHERE action = 'webhook.disable'"),
      ).toEqual([{ action: 'webhook.disable', target: `webhook:${id}`, actor: 'service' }]);
      receiver.behave = (_request, response) => response.end('ok');
      const attempts = receiver.received.length;
      await sleep(500);
      expect(receiver.received.length).toBe(attempts);
      // The metrics: every attempt an http_error, one webhook turned off, its delivery waiting.
      const off = await metricsOf(strict, 'rhythmc_webhook');
      expect(off['rhythmc_webhook_attempts_total{result="http_error"}']).toBe(attempts);
      expect(off['rhythmc_webhook_attempts_total{result="delivered"}']).toBeUndefined();
      expect(off['rhythmc_webhook_disables_total']).toBe(1);
      expect(off['rhythmc_webhook_deliveries_total{outcome="delivered"}']).toBe(0);
      expect(off['rhythmc_webhook_deliveries_total{outcome="given_up"}']).toBe(0);
      expect(off['rhythmc_webhooks{state="disabled"}']).toBe(1);
      expect(off['rhythmc_webhooks{state="enabled"}']).toBe(0);
      expect(off['rhythmc_webhook_outbox_deliveries{state="waiting"}']).toBe(1);
      expect(off['rhythmc_webhook_outbox_deliveries{state="pending"}']).toBe(0);
      expect(off['rhythmc_webhook_outbox_oldest_seconds{measure="pending"}']).toBe(0);
      expect((await strict.admin.request('PATCH', `/admin/webhooks/${id}`, { body: { enabled: true } })).status).toBe(
        200,
      );
      await eventually(async () => (await deliveries(strict, id))[0]?.state === 'delivered', 'delivered when on again');
      const on = await metricsOf(strict, 'rhythmc_webhook');
      expect(on['rhythmc_webhook_attempts_total{result="delivered"}']).toBe(1);
      expect(on['rhythmc_webhook_deliveries_total{outcome="delivered"}']).toBe(1);
      expect(on['rhythmc_webhook_delivery_seconds_count']).toBe(1);
      expect(on['rhythmc_webhooks{state="enabled"}']).toBe(1);
      expect(on['rhythmc_webhooks{state="disabled"}']).toBe(0);
      expect(on['rhythmc_webhook_outbox_deliveries{state="waiting"}']).toBe(0);
      expect(on['rhythmc_webhook_outbox_deliveries{state="pending"}']).toBe(0);
    } finally {
      await strict.close();
    }
  });
});

describe('Webhook addresses', () => {
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = new Receiver();
    await receiver.start();
  });
  afterAll(() => receiver.stop());

  it('refuses private, loopback, link-local and metadata addresses unless allowed, by literal and by name', async () => {
    const none = { allowed: [] };
    for (const url of [
      receiver.url(),
      `http://localhost:${receiver.port}/hook`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://192.168.1.1/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      `http://[::127.0.0.1]:${receiver.port}/hook`, // IPv4-compatible (::7f00:1), unicast to ipaddr.js
      'http://198.18.0.1/',
      'http://100.100.100.200/',
      'http://0.0.0.0/',
    ]) {
      const result = await sendDelivery(url, {}, '{}', none, 1_000);
      expect({ url, ok: result.ok, outcome: result.outcome, error: result.error }).toEqual({
        url,
        ok: false,
        outcome: 'refused',
        error: expect.stringMatching(/^refused: /),
      });
    }
    expect(receiver.received).toEqual([]);
  });

  it('refuses a URL naming a private address at registration, with the default setting', async () => {
    const app = await startTestApp({ env: { WEBHOOK_POLL_MS: '50' } });
    try {
      const response = await app.admin.post('/admin/webhooks', {
        name: 'x',
        url: 'http://169.254.169.254/',
        events: ['player.banned'],
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(
        badLines('url: 169.254.169.254 is a linkLocal address (WEBHOOK_ALLOWED_NETWORKS does not allow it)'),
      );
      // A name is resolved when a delivery connects: registered, then refused at every attempt.
      const { id } = await register(app, { url: `http://localhost:${receiver.port}/hook`, events: ['player.banned'] });
      const player = await createPlayer(app);
      await app.admin.post(`/admin/players/${player.uid}/ban`, {});
      await eventually(
        async () => /^refused: /.test((await deliveries(app, id))[0]?.lastError ?? ''),
        'refused at connect',
      );
      expect(receiver.received).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('follows no redirect, cuts an endless body and gives up a slow answer at the timeout', async () => {
    const allowed = { allowed: [[(await import('ipaddr.js')).default.parse('127.0.0.1'), 8]] as never };
    receiver.behave = (_request, response) => {
      response.statusCode = 302;
      response.setHeader('location', 'http://169.254.169.254/');
      response.end();
    };
    expect(await sendDelivery(receiver.url(), {}, '{}', allowed, 1_000)).toEqual({
      status: 302,
      ok: false,
      outcome: 'redirect',
      error: 'redirect (302) not followed',
    });
    receiver.behave = (_request, response) => {
      response.statusCode = 200;
      const timer = setInterval(() => response.write('x'.repeat(65_536)), 1);
      response.on('close', () => clearInterval(timer));
    };
    const started = Date.now();
    expect(await sendDelivery(receiver.url(), {}, '{}', allowed, 1_000)).toEqual({
      status: 200,
      ok: true,
      outcome: 'delivered',
      error: null,
    });
    expect(Date.now() - started).toBeLessThan(1_000);
    receiver.behave = () => undefined; // never answers
    expect(await sendDelivery(receiver.url(), {}, '{}', allowed, 500)).toEqual({
      status: null,
      ok: false,
      outcome: 'timeout',
      error: 'no complete answer within 500 ms',
    });
  });
});

describe('Kept-alive delivery connections (DeliveryAgents)', () => {
  let receiver: Receiver;
  let agents: DeliveryAgents;
  const allowed = async () => ({ allowed: [[(await import('ipaddr.js')).default.parse('127.0.0.1'), 8]] as never });
  const DELIVERED = { status: 200, ok: true, outcome: 'delivered', error: null };

  beforeEach(async () => {
    receiver = new Receiver();
    await receiver.start();
    agents = new DeliveryAgents(2);
  });

  afterEach(async () => {
    agents.destroy();
    await receiver.stop();
  });

  it('sends one delivery after the other on one connection, and never reuses one whose answer was cut off', async () => {
    const policy = await allowed();
    for (let i = 0; i < 3; i++)
      expect(await sendDelivery(receiver.url(), {}, `{"n":${i}}`, policy, 1_000, agents)).toEqual(DELIVERED);
    const ports = receiver.received.map((entry) => entry.port);
    expect(new Set(ports).size).toBe(1);
    // An endless body: cut at RESPONSE_READ_LIMIT, delivered, and its connection destroyed.
    receiver.behave = (_request, response) => {
      response.statusCode = 200;
      const timer = setInterval(() => response.write('x'.repeat(65_536)), 1);
      response.on('close', () => clearInterval(timer));
    };
    expect(await sendDelivery(receiver.url(), {}, '{"n":3}', policy, 1_000, agents)).toEqual(DELIVERED);
    receiver.behave = (_request, response) => response.end('ok');
    expect(await sendDelivery(receiver.url(), {}, '{"n":4}', policy, 1_000, agents)).toEqual(DELIVERED);
    const [, , , cut, after] = receiver.received.map((entry) => entry.port);
    expect(cut).toBe(ports[0]);
    expect(after).not.toBe(cut);
  });

  it('sends once more on a new connection when the kept one was closed by the receiver, and not on a new one', async () => {
    const policy = await allowed();
    expect(await sendDelivery(receiver.url(), {}, '{"n":0}', policy, 1_000, agents)).toEqual(DELIVERED);
    // The next request arrives on the kept connection, which the receiver closes without answering.
    let closeNext = true;
    receiver.behave = (request, response) => {
      if (closeNext) {
        closeNext = false;
        request.request.socket.destroy();
        return;
      }
      response.end('ok');
    };
    expect(await sendDelivery(receiver.url(), {}, '{"n":1}', policy, 1_000, agents)).toEqual(DELIVERED);
    const ports = receiver.received.map((entry) => [entry.body, entry.port]);
    expect(ports.map(([body]) => body)).toEqual(['{"n":0}', '{"n":1}', '{"n":1}']);
    expect(ports[1][1]).toBe(ports[0][1]);
    expect(ports[2][1]).not.toBe(ports[1][1]);
    // On a connection of its own (no reuse), a close is a failed attempt, retried later by the loop.
    closeNext = true;
    const alone = await sendDelivery(receiver.url(), {}, '{"n":2}', policy, 1_000);
    expect({ ok: alone.ok, outcome: alone.outcome, sent: receiver.received.length }).toEqual({
      ok: false,
      outcome: 'connection',
      sent: 4,
    });
  });

  it('does not send again when its own stop cut the kept connection (the agents destroyed)', async () => {
    const policy = await allowed();
    expect(await sendDelivery(receiver.url(), {}, '{"n":0}', policy, 1_000, agents)).toEqual(DELIVERED);
    receiver.behave = () => undefined; // holds the next request unanswered
    const pending = sendDelivery(receiver.url(), {}, '{"n":1}', policy, 5_000, agents);
    await eventually(() => receiver.received.length === 2, 'the second request on the kept connection');
    agents.destroy(); // what the loop's stop does after its wait
    const cut = await pending;
    await new Promise((resolve) => setTimeout(resolve, 300)); // a resend would have arrived by now
    expect({ ok: cut.ok, outcome: cut.outcome, sent: receiver.received.map((entry) => entry.body) }).toEqual({
      ok: false,
      outcome: 'connection',
      sent: ['{"n":0}', '{"n":1}'],
    });
    expect(receiver.received[1].port).toBe(receiver.received[0].port);
  });
});

/** The dispatcher's delivery thread (a private field: tests end it as a crash would). */
const deliveryThread = (app: TestApp): Worker | null =>
  (app.get(WebhookDispatcher) as unknown as { worker: Worker | null }).worker;

describe('The claim (rhythmc_webhook_claim)', () => {
  it('reads the due index in order up to its limit, not the whole backlog, on a table never analyzed', async () => {
    // Polls a minute apart: nothing claims but the test.
    const app = await startTestApp({ env: { ...FAST, WEBHOOK_POLL_MS: '60000' } });
    try {
      const { id } = await register(app, { url: 'http://127.0.0.1:9/hook', events: ['player.banned'] });
      const paused = await register(app, { url: 'http://127.0.0.1:9/paused', events: ['player.banned'] });
      await app.admin.request('PATCH', `/admin/webhooks/${paused.id}`, { body: { enabled: false } });
      // A table never analyzed (a new deployment, autovacuum off, or a backlog grown since the last
      // ANALYZE: whatever autovacuum did here), then 20,000 due deliveries; ahead of them in the due
      // order, 3 of a paused webhook.
      await app.sql(`DELETE FROM pg_statistic WHERE starelid = 'webhook_delivery'::regclass`);
      await app.sql(`UPDATE pg_class SET reltuples = -1, relpages = 0 WHERE oid = 'webhook_delivery'::regclass`);
      await app.sql(
        `INSERT INTO webhook_delivery (webhook_id, event_id, event_type, payload, next_attempt_at)
         SELECT $1, gen_random_uuid(), 'player.banned', '{}'::jsonb, now() - make_interval(secs => 30000 - g)
           FROM generate_series(1, 20000) g`,
        [id],
      );
      await app.sql(
        `INSERT INTO webhook_delivery (webhook_id, event_id, event_type, payload, next_attempt_at)
         SELECT $1, gen_random_uuid(), 'player.banned', '{}'::jsonb, now() - make_interval(secs => 40000 - g)
           FROM generate_series(1, 3) g`,
        [paused.id],
      );
      const oldest = await app.sql<{ id: string }>(
        `SELECT id FROM webhook_delivery WHERE webhook_id = $1 ORDER BY next_attempt_at LIMIT 8`,
        [id],
      );
      await app.sql(`SELECT pg_stat_reset_single_table_counters('"IDX_webhook_delivery_due"'::regclass)`);
      // The claim and, in the same session, the flush of its statistics (at the statement's end).
      const [claim] = await app.sql(
        `SELECT (SELECT array_agg(id ORDER BY id) FROM rhythmc_webhook_claim(8, 60000)) AS ids, pg_stat_force_next_flush()`,
      );
      expect([...(claim.ids as string[])].sort()).toEqual(oldest.map((row) => row.id).sort());
      const [read] = await app.sql(
        `SELECT idx_scan::int AS scans, idx_tup_read::int AS entries FROM pg_stat_user_indexes WHERE indexrelname = 'IDX_webhook_delivery_due'`,
      );
      // One scan of the index (webhook_id, next_attempt_at) for the one enabled webhook, reading the
      // 8 it claims; the paused webhook's rows are never read. A bitmap scan and a sort, the plan
      // these statistics got before, read all 20,003 (checked by hand).
      expect(read).toEqual({ scans: 1, entries: 8 });
      const [leased] = await app.sql(
        `SELECT count(*)::int AS n, min(attempts)::int AS attempts FROM webhook_delivery WHERE next_attempt_at > now() + interval '50 seconds'`,
      );
      expect(leased).toEqual({ n: 8, attempts: 1 });
      // With a cap of 3 a webhook and 2 of its attempts in flight, a claim of 8 takes the next 1.
      const next = await app.sql<{ id: string }>(
        `SELECT id FROM webhook_delivery WHERE webhook_id = $1 AND next_attempt_at <= now() ORDER BY next_attempt_at LIMIT 1`,
        [id],
      );
      const [capped] = await app.sql<{ ids: string[] }>(
        `SELECT array_agg(id) AS ids FROM rhythmc_webhook_claim(8, 60000, 3, ARRAY[$1, $1]::int[])`,
        [id],
      );
      expect(capped.ids).toEqual([next[0].id]);
      // Another webhook's attempts in flight leave this one's room as it was.
      const [other] = await app.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM rhythmc_webhook_claim(8, 60000, 3, ARRAY[$1, $1, $1]::int[])`,
        [paused.id],
      );
      expect(other.n).toBe(3);
    } finally {
      await app.close();
    }
  });
});

describe('The delivery thread', () => {
  let receiver: Receiver;

  beforeEach(async () => {
    receiver = new Receiver();
    await receiver.start();
  });

  afterEach(async () => {
    await receiver.stop();
  });

  it('is started again when it dies mid-attempt; the attempt it held is sent again under the same id after its lease', async () => {
    const logs = new LogCapture();
    const app = await startTestApp({ env: { ...FAST, LOG_LEVEL: 'error' }, logDestination: logs });
    try {
      const { id } = await register(app, { url: receiver.url(), events: ['player.banned'] });
      receiver.behave = () => undefined; // holds the request: the attempt is in flight when the thread dies
      const player = await createPlayer(app);
      await app.admin.post(`/admin/players/${player.uid}/ban`, {});
      await eventually(() => receiver.received.length === 1, 'the first attempt reaching the receiver');
      const dead = deliveryThread(app);
      expect(dead).not.toBeNull();
      await dead!.terminate();
      await eventually(
        () => deliveryThread(app) !== null && deliveryThread(app) !== dead,
        'a new delivery thread',
        5_000,
      );
      expect(
        logs
          .records()
          .filter((record) => /delivery thread/.test(String(record.msg)))
          .map((record): unknown[] => [record.level, record.context, record.msg]),
      ).toEqual([['error', 'Webhooks', 'The webhook delivery thread exited with 1; starting it again']]);
      // The claim's lease (timeout + 30 s) keeps the row from every thread, the new one too.
      const [held] = await app.sql<{ state: string; attempts: number; lease: boolean }>(
        `SELECT state, attempts, next_attempt_at > now() + interval '20 seconds' AS lease FROM webhook_delivery`,
      );
      expect(held).toEqual({ state: 'pending', attempts: 1, lease: true });
      receiver.behave = (_request, response) => response.end('ok');
      await app.sql('UPDATE webhook_delivery SET next_attempt_at = now()'); // the lease ends
      await eventually(
        async () => (await deliveries(app, id))[0]?.state === 'delivered',
        'delivered by the new thread',
      );
      const [row] = await deliveries(app, id);
      expect(row).toMatchObject({ state: 'delivered', attempts: 2, lastStatus: 200 });
      expect(receiver.received.map((entry) => entry.headers['x-rhythmc-delivery'])).toEqual([row.id, row.id]);
      // The new thread takes new events at once.
      await app.admin.delete(`/admin/players/${player.uid}/ban`);
      await app.admin.post(`/admin/players/${player.uid}/ban`, {});
      await eventually(() => receiver.received.length === 3, 'a new event delivered');
    } finally {
      await app.close();
    }
  });

  it('keeps at most its share of the slots for a receiver that does not answer; another webhook is delivered meanwhile', async () => {
    const app = await startTestApp({
      env: { ...FAST, WEBHOOK_TIMEOUT_SECONDS: '20', WEBHOOK_CONCURRENCY: '4', WEBHOOK_CONCURRENCY_PER_WEBHOOK: '2' },
    });
    const held: ServerResponse[] = [];
    try {
      const slow = await register(app, { url: receiver.url('/slow'), events: ['player.banned'] });
      const quick = await register(app, { url: receiver.url('/quick'), events: ['player.banned'] });
      let open = 0;
      let mostOpen = 0;
      receiver.behave = (request, response) => {
        if (request.request.url !== '/slow') return void response.end('ok');
        open++;
        mostOpen = Math.max(mostOpen, open);
        response.on('close', () => open--);
        held.push(response); // answered when the test says
      };
      const at = (path: string) => receiver.received.filter((entry) => entry.request.url === path);
      const players = [];
      for (let i = 0; i < 6; i++) players.push(await createPlayer(app));
      for (const player of players) await app.admin.post(`/admin/players/${player.uid}/ban`, {});
      // Without a share per webhook the slow one took all 4 slots, and the quick one waited 20 s.
      await eventually(() => at('/quick').length === 6, 'every quick delivery while the slow ones are held', 5_000);
      expect({ slowSent: at('/slow').length, open }).toEqual({ slowSent: 2, open: 2 });
      await eventually(
        async () => (await deliveries(app, quick.id)).filter((row) => row.state === 'delivered').length === 6,
        'the quick ones recorded',
      );
      // What an operator sees: the slow receiver at its share, the quick one with nothing in flight.
      expect(await metricsOf(app, 'rhythmc_webhook_attempts_in_flight')).toEqual({
        [`rhythmc_webhook_attempts_in_flight{webhook="${slow.id}"}`]: 2,
      });
      receiver.behave = (_request, response) => response.end('ok');
      for (const response of held.splice(0)) response.end('ok');
      await eventually(
        async () => (await deliveries(app, slow.id)).filter((row) => row.state === 'delivered').length === 6,
        'the slow ones delivered once answered',
      );
      expect(await metricsOf(app, 'rhythmc_webhook_attempts_in_flight')).toEqual({});
      const slowIds = at('/slow').map((entry) => entry.headers['x-rhythmc-delivery']);
      expect({ sent: slowIds.length, distinct: new Set(slowIds).size, mostOpen }).toEqual({
        sent: 6,
        distinct: 6,
        mostOpen: 2,
      });
    } finally {
      for (const response of held) response.end('ok');
      await app.close();
    }
  });

  it('at shutdown leaves an attempt still in flight to be sent again under the same id, and one that finished recorded', async () => {
    const app = await startTestApp({ env: { ...FAST, WEBHOOK_TIMEOUT_SECONDS: '20' } });
    try {
      const { id } = await register(app, { url: receiver.url(), events: ['player.banned'] });
      const [quick, slow] = [await createPlayer(app), await createPlayer(app)];
      // The quick player's delivery is answered; the slow one's is answered after the shutdown's wait (2 s).
      receiver.behave = (request, response) => {
        if ((request.json.data as { player: { uid: number } }).player.uid === quick.uid) response.end('ok');
        else setTimeout(() => response.end('late'), 6_000);
      };
      await app.admin.post(`/admin/players/${quick.uid}/ban`, {});
      // The quick one answered first, so the slow one goes out on its kept-alive connection: the
      // stop's reset of a reused connection must not send the delivery again on another.
      await eventually(async () => (await deliveries(app, id))[0]?.state === 'delivered', 'the quick one recorded');
      await app.admin.post(`/admin/players/${slow.uid}/ban`, {});
      await eventually(() => receiver.received.length === 2, 'both attempts reaching the receiver');
      expect(new Set(receiver.received.map((entry) => entry.port)).size).toBe(1); // one connection
      const startedAt = Date.now();
      await app.restart();
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1_500); // waited for the attempt in flight
      const rows = await app.sql<{ uid: string; state: string; attempts: number; lease: boolean }>(
        `SELECT (payload->'player'->>'uid')::int AS uid, state, attempts,
                CASE WHEN state = 'pending' THEN next_attempt_at > now() + interval '10 seconds' END AS lease
           FROM webhook_delivery ORDER BY created_at`,
      );
      expect(rows).toEqual([
        { uid: quick.uid, state: 'delivered', attempts: 1, lease: null },
        { uid: slow.uid, state: 'pending', attempts: 1, lease: true },
      ]);
      receiver.behave = (_request, response) => response.end('ok');
      await app.sql(`UPDATE webhook_delivery SET next_attempt_at = now() WHERE state = 'pending'`); // the lease ends
      await eventually(
        async () => (await deliveries(app, id)).every((row) => row.state === 'delivered'),
        'the slow one delivered after the restart',
      );
      const slowRow = (await deliveries(app, id)).find((row) => row.attempts === 2);
      expect(slowRow).toMatchObject({ state: 'delivered', lastStatus: 200 });
      const slowIds = receiver.received
        .filter((entry) => (entry.json.data as { player: { uid: number } }).player.uid === slow.uid)
        .map((entry) => entry.headers['x-rhythmc-delivery']);
      expect(slowIds).toEqual([slowRow!.id, slowRow!.id]);
    } finally {
      await app.close();
    }
  });
});

(multiInstanceAvailable() ? describe : describe.skip)('Webhooks on two instances', () => {
  it('delivers each event once although both instances claim from one outbox', async () => {
    const receiver = new Receiver();
    await receiver.start();
    // A delivery that times out is sent again (at least once, by design): on a loaded machine 1 s
    // was missed once, and a retry would count here as a double claim. 10 s keeps this to claims.
    const env = { ...FAST, WEBHOOK_TIMEOUT_SECONDS: '10' };
    const first = await startTestApp({ env });
    const second = await startTestApp({ env, shareWith: first });
    try {
      const { id } = await register(first, { url: receiver.url(), events: ['player.banned'] });
      const players = await Promise.all(Array.from({ length: 20 }, () => createPlayer(first)));
      await Promise.all(
        players.map((player, i) => (i % 2 ? first : second).admin.post(`/admin/players/${player.uid}/ban`, {})),
      );
      await eventually(
        async () => (await first.sql("SELECT id FROM webhook_delivery WHERE state = 'delivered'")).length === 20,
        'all delivered',
      );
      await sleep(500);
      expect(receiver.received).toHaveLength(20);
      expect(new Set(receiver.received.map((entry): unknown => entry.json.id)).size).toBe(20);
      expect((await deliveries(first, id)).every((row) => row.attempts === 1)).toBe(true);
    } finally {
      await second.close();
      await first.close();
      await receiver.stop();
    }
  });
});

(multiInstanceAvailable() ? describe : describe.skip)(
  'Board updates and webhooks on two instances sharing Redis',
  () => {
    it('brings an upload on one instance to a socket on the other once, and its first place to the receiver once', async () => {
      const receiver = new Receiver();
      await receiver.start();
      const first = await startTestApp({ env: FAST });
      const second = await startTestApp({ env: FAST, shareWith: first });
      try {
        await register(first, { url: receiver.url(), events: ['chart.first_place'] });
        const server = await onlineServer(first);
        await defineCharts(first, [951]);
        // The socket is on the second instance; the upload is answered by the first.
        const listening = await WsClient.connect(second.baseUrl, server.accessToken);
        const local = await WsClient.connect(first.baseUrl, server.accessToken);
        try {
          for (const socket of [listening, local])
            expect(await socket.request('board_updates', { enabled: true })).toEqual({
              event: 'board_updates',
              data: { enabled: true },
            });
          const player = await onlinePlayer(first, server);
          await upload(first, server, player, 951, { acc: 93 });
          const frame = await listening.next((f) => f.event === 'board_update', 5_000);
          expect(frame).toEqual({ event: 'board_update', data: { atp: true, levelIds: [951], top: 10 } });
          await eventually(() => receiver.of('chart.first_place').length === 1, 'the first place delivered');
          await eventually(
            async () => (await first.sql("SELECT id FROM webhook_delivery WHERE state = 'delivered'")).length === 1,
            'marked delivered',
          );
          // Past a few flushes (BOARD_FLUSH_MS 250) and polls (50 ms) of both instances: nothing more.
          await sleep(1_500);
          expect(listening.frames.filter((f) => f.event === 'board_update')).toEqual([frame]);
          expect(local.frames.filter((f) => f.event === 'board_update')).toEqual([frame]);
          expect(receiver.received).toHaveLength(1);
          expect(receiver.received[0].json).toMatchObject({
            type: 'chart.first_place',
            data: { player: { uid: player.uid }, chart: { levelId: 951 }, acc: 93 },
          });
          expect(await first.sql('SELECT state, attempts FROM webhook_delivery')).toEqual([
            { state: 'delivered', attempts: 1 },
          ]);
        } finally {
          listening.socket.close();
          local.socket.close();
        }
      } finally {
        await second.close();
        await first.close();
        await receiver.stop();
      }
    });
  },
);

describe('Live board updates', () => {
  it('sends board_update to sockets that opted in when an upload enters a top 10, and nothing to the others', async () => {
    const app = await startTestApp();
    try {
      const server = await onlineServer(app);
      await defineCharts(app, [901]);
      const listening = await WsClient.connect(app.baseUrl, server.accessToken);
      const silent = await WsClient.connect(app.baseUrl, server.accessToken);
      try {
        expect(await listening.request('board_updates', { enabled: true })).toEqual({
          event: 'board_updates',
          data: { enabled: true },
        });
        expect(await listening.request('board_updates', { enabled: 'yes' }, 'error')).toEqual({
          event: 'error',
          data: badLines('enabled must be a boolean'),
        });
        const player = await onlinePlayer(app, server);
        await upload(app, server, player, 901, { acc: 91 });
        const frame = await listening.next((f) => f.event === 'board_update', 5_000);
        expect(frame).toEqual({ event: 'board_update', data: { atp: true, levelIds: [901], top: 10 } });
        // A play below the best changes no board.
        const seen = listening.frames.length;
        await upload(app, server, player, 901, { acc: 50 });
        await sleep(800);
        expect(listening.frames.slice(seen).filter((f) => f.event === 'board_update')).toEqual([]);
        expect(silent.frames.filter((f) => f.event === 'board_update')).toEqual([]);
        // Turned off again: no more frames.
        await listening.request('board_updates', { enabled: false });
        const after = listening.frames.length;
        await upload(app, server, player, 901, { acc: 95 });
        await sleep(800);
        expect(listening.frames.slice(after).filter((f) => f.event === 'board_update')).toEqual([]);
      } finally {
        listening.socket.close();
        silent.socket.close();
      }
    } finally {
      await app.close();
    }
  });
});
