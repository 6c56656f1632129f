import { readCookie, serializeCookie } from './cookies';

describe('cookies', () => {
  it('reads the first cookie of a name, ignoring spaces and other cookies', () => {
    const headers = { cookie: 'a=1; rhythmc_session=abc.DEF_-; rhythmc_session=second;b=2' };
    expect(readCookie(headers, 'rhythmc_session')).toBe('abc.DEF_-');
    expect(readCookie(headers, 'b')).toBe('2');
    expect(readCookie(headers, 'missing')).toBeNull();
    expect(readCookie({ cookie: 'rhythmc_session=' }, 'rhythmc_session')).toBeNull();
    expect(readCookie({}, 'rhythmc_session')).toBeNull();
    expect(readCookie({ cookie: 'novalue; x_rhythmc_session=1' }, 'rhythmc_session')).toBeNull();
  });

  it('writes SameSite=Strict always, HttpOnly, Secure and Max-Age as asked', () => {
    expect(serializeCookie('s', 'v', { path: '/admin', httpOnly: true, secure: true })).toBe(
      's=v; Path=/admin; SameSite=Strict; HttpOnly; Secure',
    );
    expect(serializeCookie('c', '', { path: '/', httpOnly: false, secure: false, maxAge: 0 })).toBe(
      'c=; Path=/; SameSite=Strict; Max-Age=0',
    );
  });
});
