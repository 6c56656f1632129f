import { redactSecrets } from './logging';

describe('redactSecrets', () => {
  it('replaces credentials at the top level and one level down, without touching the logged object', () => {
    const body = { uid: 5, accessToken: 'a', options: { continueEnabled: true } };
    const logged = {
      context: 'X',
      token: 't',
      body,
      headers: { authorization: 'Bearer x', cookie: 'c', 'user-agent': 'ua' },
      list: ['resumeToken'],
    };
    expect(redactSecrets(logged)).toEqual({
      context: 'X',
      token: '[redacted]',
      body: { uid: 5, accessToken: '[redacted]', options: { continueEnabled: true } },
      headers: { authorization: '[redacted]', cookie: '[redacted]', 'user-agent': 'ua' },
      list: ['resumeToken'],
    });
    expect(logged.token).toBe('t');
    expect(body.accessToken).toBe('a');
  });

  it.each(['authToken', 'resumeToken', 'netToken', 'bootstrapToken', 'serverAuthToken', 'refreshToken', 'sig'])(
    'redacts %s',
    (key) => {
      expect(redactSecrets({ [key]: 'secret', nested: { [key]: 'secret' } })).toEqual({
        [key]: '[redacted]',
        nested: { [key]: '[redacted]' },
      });
    },
  );

  it('answers the same object when there is nothing to redact', () => {
    const line = { reqId: 'r', method: 'GET', route: '/server/ping', status: 200, err: new Error('x') };
    expect(redactSecrets(line)).toBe(line);
  });
});
