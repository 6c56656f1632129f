import { onlinePlayer, TestPlayerSession } from '../factories/player.factory';
import { onlineServer } from '../factories/server.factory';
import { LogCapture } from '../support/log-capture';
import { startTestApp, TestApp } from '../support/test-app';
import { eventually } from '../support/wait';
import { WsClient } from '../support/ws-client';
import { badLines, badRequest } from '../support/bad-request';

/**
 * Frames over the limits (docs/decisions.md "Realtime"): a frame over 16 KiB, or one that breaks
 * the rules of every JSON body (64 levels of nesting, NUL, lone surrogates, reserved keys), is
 * answered with an `error` frame before any handler reads it; the connection stays open; the first
 * such frame of a connection is logged once, as a warning without a stack. ws closes a frame over
 * 256 KiB with 1009.
 */
describe('WebSocket frames over the limits', () => {
  const capture = new LogCapture();
  let app: TestApp;
  const clients: WsClient[] = [];

  beforeAll(async () => {
    app = await startTestApp({ env: { LOG_LEVEL: 'warn' }, logDestination: capture });
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.socket.terminate();
  });
  afterAll(async () => {
    await app.close();
  });

  const connect = async (): Promise<{ client: WsClient; serverID: number; player: TestPlayerSession }> => {
    const session = await onlineServer(app);
    const client = await WsClient.connect(app.baseUrl, session.accessToken);
    clients.push(client);
    return { client, serverID: session.serverID, player: await onlinePlayer(app, session) };
  };

  /** Sends a raw frame and waits for the error frame it is answered with. */
  const answerTo = async (client: WsClient, raw: string) => {
    const from = client.frames.length;
    client.sendRaw(raw);
    return client.next((frame) => frame.event === 'error', 5000, from);
  };

  /** The lines the app logged about refused frames of server `serverID`. */
  const refusalLines = (serverID: number) =>
    capture
      .records()
      .filter((record) => String(record.msg).startsWith(`Refused a WebSocket frame from server ${serverID} `));

  it('answers a frame nested 5,000 levels deep (under the size limit) with BAD_REQUEST, logs it once without a stack, and keeps the connection', async () => {
    const { client, serverID, player } = await connect();
    const depth = 5_000;
    const deep = `{"event":"chat","data":{"uid":${player.uid},"message":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
    // The frame is level 1, data 2, message 3: the array at level 65 is message's 62nd [0].
    const message = `The frame nests deeper than 64 levels (at data.message${'[0]'.repeat(62)})`;
    for (let i = 0; i < 3; i++)
      expect(await answerTo(client, deep)).toEqual({ event: 'error', data: badRequest(message) });

    const ack = await client.request('resume_session', { uid: player.uid, accessToken: player.accessToken });
    expect(ack.data).toEqual({ uid: player.uid, ok: true, expiresIn: expect.any(Number) });

    await eventually(() => Promise.resolve(refusalLines(serverID).length > 0), 'the refusal logged');
    const lines = refusalLines(serverID);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn', context: 'Realtime' });
    expect(lines[0].msg).toContain(message);
    expect(lines[0]).not.toHaveProperty('err');
    expect(lines[0]).not.toHaveProperty('stack');
    // Nothing failed: no error line at all (the deep frame used to be a 500 with its stack logged).
    expect(capture.records().filter((record) => record.level === 'error' || record.level === 'fatal')).toEqual([]);
  });

  it('answers a frame over 16 KiB with PAYLOAD_TOO_LARGE, unread, and closes one over 256 KiB with 1009', async () => {
    const { client, serverID, player } = await connect();
    const chat = (length: number) =>
      JSON.stringify({ event: 'chat', data: { uid: player.uid, message: 'x'.repeat(length) } });
    const justFits = chat(16 * 1024 - chat(0).length);
    expect(Buffer.byteLength(justFits)).toBe(16 * 1024);
    // At the limit the frame is read: the message is refused by the chat rules, not by size.
    expect(await answerTo(client, justFits)).toEqual({
      event: 'error',
      data: badLines('message must be a non-empty string of at most 256 characters'),
    });
    for (const length of [16 * 1024, 64 * 1024, 200 * 1024])
      expect(await answerTo(client, chat(length))).toEqual({
        event: 'error',
        data: { error: 'PAYLOAD_TOO_LARGE', message: 'The frame exceeds 16384 bytes' },
      });
    // A binary frame is measured the same way.
    const from = client.frames.length;
    client.socket.send(Buffer.from(chat(20_000)), { binary: true });
    expect(await client.next((frame) => frame.event === 'error', 5000, from)).toEqual({
      event: 'error',
      data: { error: 'PAYLOAD_TOO_LARGE', message: 'The frame exceeds 16384 bytes' },
    });
    const ack = await client.request('resume_session', { uid: player.uid, accessToken: player.accessToken });
    expect(ack.data.ok).toBe(true);
    expect(refusalLines(serverID)).toHaveLength(1);

    client.sendRaw(chat(256 * 1024));
    expect((await client.closed).code).toBe(1009);
  });

  it('holds frames to the rules of every JSON body: no NUL, no lone surrogate, no reserved key', async () => {
    const { client, player } = await connect();
    const cases: Array<[string, string]> = [
      [
        JSON.stringify({ event: 'chat', data: { uid: player.uid, message: 'a\u0000b' } }),
        'data.message must not contain the NUL character (\\u0000)',
      ],
      [
        `{"event":"chat","data":{"uid":${player.uid},"message":"a\\ud800b"}}`,
        'data.message must not contain a lone surrogate (\\ud800-\\udfff)',
      ],
      [
        `{"event":"chat","data":{"uid":${player.uid},"__proto__":{"message":"hi"}}}`,
        'The key "__proto__" in data is not accepted',
      ],
      [`{"event":"chat","__proto__":{}}`, 'The key "__proto__" in the frame is not accepted'],
    ];
    for (const [raw, message] of cases)
      expect(await answerTo(client, raw)).toEqual({
        event: 'error',
        // A text value names its field; a reserved key is about the JSON itself.
        data: message.startsWith('The key') ? badRequest(message) : badLines(message),
      });
    // A frame within the rules still goes through (the sender receives its own chat line).
    const from = client.frames.length;
    client.send('chat', { uid: player.uid, message: 'still here' });
    const line = await client.next((frame) => frame.event === 'chat', 5000, from);
    expect(line.data).toMatchObject({ uid: player.uid, message: 'still here' });
  });
});
