import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onlineServer } from '../factories/server.factory';
import { multiInstanceAvailable, startTestApp, TestApp } from '../support/test-app';
import { badLines, badRequest } from '../support/bad-request';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const sha1 = (bytes: Buffer) => createHash('sha1').update(bytes).digest('hex');
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A RESOURCE_DIR under the OS temp dir; `files` maps relative paths to contents. */
class Fixture {
  readonly root = mkdtempSync(join(tmpdir(), 'rhythmc-resources-'));
  readonly files = new Map<string, Buffer>();

  write(path: string, content: Buffer | string): Buffer {
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    mkdirSync(dirname(join(this.root, path)), { recursive: true });
    writeFileSync(join(this.root, path), bytes);
    this.files.set(path, bytes);
    return bytes;
  }

  remove(path: string): void {
    rmSync(join(this.root, path));
    this.files.delete(path);
  }

  /** Manifest entries of the files under `prefix`, sorted by path as the service sorts them (byte order). */
  entries(prefix: string): Array<{ path: string; sha256: string }> {
    return [...this.files.keys()]
      .filter((path) => path.startsWith(prefix))
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
      .map((path) => ({ path, sha256: sha256(this.files.get(path)!) }));
  }

  dispose(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** The indexed part of the standard fixture, plus files the index must leave out. */
function standardFixture(): Fixture {
  const fixture = new Fixture();
  fixture.write('data/songs/1/chart.json', '{"bpm":180,"notes":[1,2,3]}');
  fixture.write('data/songs/1/audio.ogg', randomBytes(300_000));
  fixture.write('data/songs/2/chart.json', '{"bpm":120}');
  fixture.write('data/songs/10/chart.json', '{"bpm":90}');
  fixture.write('data/ui/icon set/ümlaut & co.png', randomBytes(1_000));
  fixture.write('data/empty.bin', Buffer.alloc(0));
  fixture.write('lang/en_us.json', '{"hello":"Hello"}');
  fixture.write('lang/de/de_de.json', '{"hello":"Hallo"}');
  fixture.write('packs/full.zip', randomBytes(200_000));
  fixture.write('packs/song-1.zip', randomBytes(50_000));
  // Not indexed: outside data/lang/packs, not a top-level .zip of packs/, dotfiles, symbolic links.
  for (const path of [
    'other/secret.txt',
    'packs/readme.txt',
    'packs/nested/inner.zip',
    'data/.DS_Store',
    'data/.git/config',
    'root.json',
  ]) {
    mkdirSync(dirname(join(fixture.root, path)), { recursive: true });
    writeFileSync(join(fixture.root, path), 'not indexed');
  }
  symlinkSync(join(fixture.root, 'other/secret.txt'), join(fixture.root, 'data/link.json'));
  symlinkSync(join(fixture.root, 'other'), join(fixture.root, 'data/linked-dir'));
  return fixture;
}

interface Fetched {
  status: number;
  headers: Headers;
  bytes: Buffer;
  body: any;
}

/**
 * Fetches a handed-out URL the way a downloader does: no Authorization header. The tests bind
 * to port 0, so the advertised origin (http://localhost:0) is swapped for the real one.
 */
async function fetchUrl(
  app: TestApp,
  url: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<Fetched> {
  expect(url.startsWith(`${app.config.assetServerUrl}/`)).toBe(true);
  const target = new URL(url.slice(app.config.assetServerUrl.length), app.baseUrl);
  const response = await fetch(target, { method: init.method ?? 'GET', headers: init.headers ?? {} });
  const bytes = Buffer.from(await response.arrayBuffer());
  const json = (response.headers.get('content-type') ?? '').includes('application/json') && bytes.length > 0;
  return {
    status: response.status,
    headers: response.headers,
    bytes,
    body: json ? JSON.parse(bytes.toString()) : undefined,
  };
}

/** A link signed with the service's stored key, for expiry tests. */
async function signedLink(app: TestApp, path: string, expires: number): Promise<string> {
  const [{ secret }] = await app.sql<{ secret: string }>('SELECT secret FROM resource_signing_key WHERE id = 1');
  const sig = createHmac('sha256', Buffer.from(secret, 'hex')).update(`${expires}:${path}`).digest('base64url');
  const encoded = path.split('/').map(encodeURIComponent).join('/');
  return `${app.config.assetServerUrl}/resources/files/${encoded}?expires=${expires}&sig=${sig}`;
}

describe('Resources: manifest, downloads and signed links', () => {
  let fixture: Fixture;
  let app: TestApp;
  let token: string;

  beforeAll(async () => {
    fixture = standardFixture();
    app = await startTestApp({ env: { RESOURCE_DIR: fixture.root } });
    token = (await onlineServer(app)).accessToken;
  });
  afterAll(async () => {
    await app.close();
    fixture.dispose();
  });

  const api = () => app.http.withToken(token);

  describe('authentication', () => {
    it.each([
      ['GET', '/resources/manifest'],
      ['POST', '/resources/down'],
      ['GET', '/resources/packmanifest'],
    ])('%s %s answers 401 without the server token', async (method, path) => {
      const response = await app.http.request(method, path, {
        token: null,
        body: method === 'POST' ? ['data/songs/1/chart.json'] : undefined,
      });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Missing bearer server access token' });
    });

    it.each([
      ['GET', '/resources/manifest'],
      ['POST', '/resources/down'],
      ['GET', '/resources/packmanifest'],
    ])('%s %s answers 401 with a token that is not a server access token', async (method, path) => {
      const response = await app.http.request(method, path, {
        token: 'not-a-server-token',
        body: method === 'POST' ? [] : undefined,
      });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid or expired server access token' });
    });
  });

  describe('the index', () => {
    it('stores every indexed file with its size and hashes, and nothing else', async () => {
      const rows = await app.sql<{ path: string; kind: string; size: string; sha256: string; sha1: string | null }>(
        'SELECT path, kind, size, sha256, sha1 FROM resource_file ORDER BY path',
      );
      const kindOf = (path: string) => (path.startsWith('packs/') ? 'pack' : path.split('/')[0]);
      const expected = [...fixture.files.entries()]
        .sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
        .map(([path, bytes]) => ({
          path,
          kind: kindOf(path),
          size: String(bytes.length),
          sha256: sha256(bytes),
          sha1: kindOf(path) === 'pack' ? sha1(bytes) : null,
        }));
      expect(rows).toEqual(expected);
    });
  });

  describe('GET /resources/manifest', () => {
    it('lists data and lang files with their SHA-256 when lang=true, sorted by path', async () => {
      const response = await api().get('/resources/manifest', { query: { lang: 'true' } });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ Data: fixture.entries('data/'), Lang: fixture.entries('lang/') });
      expect((response.body as { Data: Array<{ path: string }> }).Data.map((entry) => entry.path)).toEqual([
        'data/empty.bin',
        'data/songs/1/audio.ogg',
        'data/songs/1/chart.json',
        'data/songs/10/chart.json',
        'data/songs/2/chart.json',
        'data/ui/icon set/ümlaut & co.png',
      ]);
    });

    it.each([[{ lang: 'false' }], [{}]])('answers Lang as [] for %j', async (query) => {
      const response = await api().get('/resources/manifest', { query });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ Data: fixture.entries('data/'), Lang: [] });
    });

    it.each(['yes', 'TRUE', '1', ''])('answers 400 for lang=%j', async (lang) => {
      const response = await api().get('/resources/manifest', { query: { lang } });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badLines('lang must be true or false'));
    });

    it('answers 400 for a repeated lang parameter', async () => {
      const response = await api().get('/resources/manifest?lang=true&lang=false');
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badLines('lang must be true or false'));
    });

    it('is served with an ETag per variant, answers 304 to If-None-Match, and changes with a rescan', async () => {
      const withLang = await api().get('/resources/manifest', { query: { lang: 'true' } });
      const withoutLang = await api().get('/resources/manifest');
      const etag = withLang.headers.get('etag') as string;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
      expect(withoutLang.headers.get('etag')).not.toBe(etag);
      expect(withLang.headers.get('cache-control')).toBe('no-cache');
      expect(withLang.headers.get('content-type')).toBe('application/json; charset=utf-8');

      const notModified = await api().get('/resources/manifest', {
        query: { lang: 'true' },
        headers: { 'If-None-Match': `"other", W/${etag}` },
      });
      expect(notModified.status).toBe(304);
      expect(notModified.text).toBe('');
      expect(
        (await api().get('/resources/manifest', { query: { lang: 'true' }, headers: { 'If-None-Match': '"other"' } }))
          .status,
      ).toBe(200);

      // A new file: after the rescan the next request has it, under a new ETag; removed again, the old ETag is back.
      fixture.write('data/zz-new.json', '{"new":true}');
      try {
        expect((await app.admin.post('/admin/resources/rescan')).status).toBe(200);
        const changed = await api().get('/resources/manifest', {
          query: { lang: 'true' },
          headers: { 'If-None-Match': etag },
        });
        expect(changed.status).toBe(200);
        expect(changed.headers.get('etag')).not.toBe(etag);
        expect((changed.body as { Data: Array<{ path: string }> }).Data.map((entry) => entry.path)).toContain(
          'data/zz-new.json',
        );
      } finally {
        fixture.remove('data/zz-new.json');
        expect((await app.admin.post('/admin/resources/rescan')).status).toBe(200);
      }
      const back = await api().get('/resources/manifest', { query: { lang: 'true' } });
      expect(back.headers.get('etag')).toBe(etag);
      expect(back.body).toEqual({ Data: fixture.entries('data/'), Lang: fixture.entries('lang/') });
    });
  });

  describe('POST /resources/down', () => {
    it('answers path, signed url, bytes and sha256 for every manifest file; each url gives the exact bytes without a token', async () => {
      const paths = [...fixture.entries('data/'), ...fixture.entries('lang/')].map((entry) => entry.path);
      const before = nowSeconds();
      const response = await api().post('/resources/down', paths);
      expect(response.status).toBe(200);
      expect(response.body).toEqual(
        paths.map((path) => ({
          path,
          url: expect.stringMatching(
            /^http:\/\/localhost:0\/resources\/files\/[^?]+\?expires=\d+&sig=[A-Za-z0-9_-]{43}$/,
          ),
          bytes: fixture.files.get(path)!.length,
          sha256: sha256(fixture.files.get(path)!),
        })),
      );
      for (const entry of response.body as Array<{ path: string; url: string }>) {
        const url = new URL(entry.url);
        expect(decodeURIComponent(url.pathname)).toBe(`/resources/files/${entry.path}`);
        const expires = Number(url.searchParams.get('expires'));
        expect(expires).toBeGreaterThanOrEqual(before + 3600);
        expect(expires).toBeLessThanOrEqual(nowSeconds() + 3600);

        const file = await fetchUrl(app, entry.url);
        const expected = fixture.files.get(entry.path)!;
        expect(file.status).toBe(200);
        expect(file.bytes.equals(expected)).toBe(true);
        expect(file.headers.get('etag')).toBe(`"${sha256(expected)}"`);
        expect(file.headers.get('content-length')).toBe(String(expected.length));
        expect(file.headers.get('accept-ranges')).toBe('bytes');
        expect(file.headers.get('content-type')).toBe('application/octet-stream');
      }
    });

    it('percent-encodes path segments in the url', async () => {
      const response = await api().post('/resources/down', ['data/ui/icon set/ümlaut & co.png']);
      expect(response.status).toBe(200);
      expect(response.body[0].url).toMatch(
        /^http:\/\/localhost:0\/resources\/files\/data\/ui\/icon%20set\/%C3%BCmlaut%20%26%20co\.png\?expires=/,
      );
    });

    it('answers [] for an empty array', async () => {
      const response = await api().post('/resources/down', []);
      expect(response.status).toBe(200);
      expect(response.body).toEqual([]);
    });

    it('answers each distinct path once, in request order', async () => {
      const response = await api().post('/resources/down', [
        'lang/en_us.json',
        'data/songs/2/chart.json',
        'lang/en_us.json',
      ]);
      expect(response.status).toBe(200);
      expect((response.body as Array<{ path: string }>).map((entry) => entry.path)).toEqual([
        'lang/en_us.json',
        'data/songs/2/chart.json',
      ]);
    });

    it.each([
      [['../etc/passwd'], '[0] "../etc/passwd" must not contain a ".." segment'],
      [
        ['data/songs/1/chart.json', 'data/../other/secret.txt'],
        '[1] "data/../other/secret.txt" must not contain a ".." segment',
      ],
      [['data/songs/..'], '[0] "data/songs/.." must not contain a ".." segment'],
      [['/data/songs/1/chart.json'], '[0] "/data/songs/1/chart.json" must be relative (no leading "/")'],
      [['data\\songs\\1\\chart.json'], '[0] "data\\\\songs\\\\1\\\\chart.json" must use "/" separators (no backslash)'],
      [['data/songs/1/chart.json', ''], '[1] "" must not be empty'],
      [['data/a\u0001b'], '[0] "data/a\\u0001b" must not contain control characters'],
      // NUL is refused for every JSON body, before the route (decisions.md "Errors").
      [['data/a\u0000b'], '[0] must not contain the NUL character (\\u0000)'],
      [['data/songs/1/chart.json', 7], '[1] must be a string'],
      [[null], '[0] must be a string'],
      [[['data/songs/1/chart.json']], '[0] must be a string'],
    ])('answers 400 naming the bad element of %j', async (body, message) => {
      const response = await api().post('/resources/down', body);
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badLines(message));
    });

    it('answers 400 for a body that is not an array', async () => {
      const body = { paths: ['data/songs/1/chart.json'] };
      const response = await api().post('/resources/down', body);
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badRequest('The request body must be a JSON array of resource paths'));
    });

    it('answers 400 for more than 10,000 paths', async () => {
      const response = await api().post(
        '/resources/down',
        Array.from({ length: 10_001 }, (_, i) => `data/${i}`),
      );
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badRequest('At most 10000 paths per request, got 10001'));
    });

    it('answers 404 listing the paths that are not in the manifest', async () => {
      const response = await api().post('/resources/down', [
        'data/songs/1/chart.json',
        'data/songs/3/chart.json',
        'packs/full.zip',
        'other/secret.txt',
        'data/link.json',
        'data/.DS_Store',
      ]);
      expect(response.status).toBe(404);
      expect(response.body).toEqual({
        error: 'NOT_FOUND',
        message:
          'Unknown resource paths (5): "data/songs/3/chart.json", "packs/full.zip", "other/secret.txt", "data/link.json", "data/.DS_Store"',
      });
    });
  });

  describe('GET /resources/files/… (signed links)', () => {
    const path = 'data/songs/1/audio.ogg';
    let url: string;

    beforeAll(async () => {
      url = (await api().post('/resources/down', [path])).body[0].url;
    });

    it('keeps one signing key in the database', async () => {
      expect(await app.sql('SELECT id, length(secret) AS length FROM resource_signing_key')).toEqual([
        { id: 1, length: 64 },
      ]);
    });

    it('answers 403 for a tampered signature', async () => {
      const parsed = new URL(url);
      const sig = parsed.searchParams.get('sig')!;
      parsed.searchParams.set('sig', `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`);
      const response = await fetchUrl(app, parsed.toString());
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ error: 'FORBIDDEN', message: 'Invalid link signature' });
    });

    it('answers 403 for a signature moved to another (indexed) path', async () => {
      const response = await fetchUrl(app, url.replace('/data/songs/1/audio.ogg?', '/data/songs/1/chart.json?'));
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ error: 'FORBIDDEN', message: 'Invalid link signature' });
    });

    it('answers 403 for an extended expiry', async () => {
      const parsed = new URL(url);
      parsed.searchParams.set('expires', String(Number(parsed.searchParams.get('expires')) + 86_400));
      const response = await fetchUrl(app, parsed.toString());
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ error: 'FORBIDDEN', message: 'Invalid link signature' });
    });

    it('answers 403 for a correctly signed but expired link', async () => {
      const response = await fetchUrl(app, await signedLink(app, path, nowSeconds() - 1));
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ error: 'FORBIDDEN', message: 'The link has expired' });
    });

    it.each([
      ['no query', (u: URL) => (u.search = '')],
      ['no sig', (u: URL) => u.searchParams.delete('sig')],
      ['no expires', (u: URL) => u.searchParams.delete('expires')],
      ['a non-numeric expiry', (u: URL) => u.searchParams.set('expires', 'soon')],
      ['a sig of the wrong length', (u: URL) => u.searchParams.set('sig', 'abc')],
    ])('answers 403 with %s', async (_label, alter) => {
      const parsed = new URL(url);
      alter(parsed);
      const response = await fetchUrl(app, parsed.toString());
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ error: 'FORBIDDEN', message: 'Missing or malformed link signature' });
    });

    it('never needs a token, and ignores one that is sent', async () => {
      const response = await fetchUrl(app, url, { headers: { Authorization: 'Bearer whatever' } });
      expect(response.status).toBe(200);
      expect(response.bytes.equals(fixture.files.get(path)!)).toBe(true);
    });

    it('answers a Range request with 206 and the exact bytes', async () => {
      const bytes = fixture.files.get(path)!;
      const response = await fetchUrl(app, url, { headers: { Range: 'bytes=1000-1999' } });
      expect(response.status).toBe(206);
      expect(response.headers.get('content-range')).toBe(`bytes 1000-1999/${bytes.length}`);
      expect(response.headers.get('content-length')).toBe('1000');
      expect(response.headers.get('etag')).toBe(`"${sha256(bytes)}"`);
      expect(response.bytes.equals(bytes.subarray(1000, 2000))).toBe(true);
    });

    it.each([
      ['bytes=299990-', 299_990, 299_999],
      ['bytes=-10', 299_990, 299_999],
      ['bytes=299990-999999999', 299_990, 299_999],
      ['bytes=0-0', 0, 0],
    ])('answers %s with the right slice', async (range, start, end) => {
      const bytes = fixture.files.get(path)!;
      const response = await fetchUrl(app, url, { headers: { Range: range } });
      expect(response.status).toBe(206);
      expect(response.headers.get('content-range')).toBe(`bytes ${start}-${end}/${bytes.length}`);
      expect(response.bytes.equals(bytes.subarray(start, end + 1))).toBe(true);
    });

    it('answers 416 with the error body for a range beyond the file', async () => {
      const response = await fetchUrl(app, url, { headers: { Range: 'bytes=300000-' } });
      expect(response.status).toBe(416);
      expect(response.headers.get('content-range')).toBe('bytes */300000');
      expect(response.body).toEqual({
        error: 'RANGE_NOT_SATISFIABLE',
        message: 'The range "bytes=300000-" is outside the 300000 bytes of the file',
      });
    });

    it('sends the whole file for several ranges or an If-Range that does not match', async () => {
      const bytes = fixture.files.get(path)!;
      for (const headers of [{ Range: 'bytes=0-1,5-6' }, { Range: 'bytes=0-1', 'If-Range': '"0000"' }] as Array<
        Record<string, string>
      >) {
        const response = await fetchUrl(app, url, { headers });
        expect(response.status).toBe(200);
        expect(response.bytes.equals(bytes)).toBe(true);
      }
      const matching = await fetchUrl(app, url, { headers: { Range: 'bytes=0-1', 'If-Range': `"${sha256(bytes)}"` } });
      expect(matching.status).toBe(206);
      expect(matching.bytes.equals(bytes.subarray(0, 2))).toBe(true);
    });

    it('answers 304 to If-None-Match with the ETag', async () => {
      const response = await fetchUrl(app, url, {
        headers: { 'If-None-Match': `"${sha256(fixture.files.get(path)!)}"` },
      });
      expect(response.status).toBe(304);
      expect(response.bytes.length).toBe(0);
    });

    it('answers HEAD with the headers only', async () => {
      const response = await fetchUrl(app, url, { method: 'HEAD' });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-length')).toBe('300000');
      expect(response.headers.get('etag')).toBe(`"${sha256(fixture.files.get(path)!)}"`);
      expect(response.bytes.length).toBe(0);
    });

    it('serves an empty file', async () => {
      const [entry] = (await api().post('/resources/down', ['data/empty.bin'])).body;
      const response = await fetchUrl(app, entry.url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-length')).toBe('0');
      expect(response.bytes.length).toBe(0);
    });

    it.each([
      [
        'an encoded traversal',
        '/resources/files/data/..%2F..%2Fother/secret.txt?expires=9999999999&sig=' + 'A'.repeat(43),
      ],
      ['a dot-dot segment', '/resources/files/data/%2E%2E/other/secret.txt?expires=9999999999&sig=' + 'A'.repeat(43)],
    ])('answers 403 for %s', async (_label, target) => {
      const response = await app.http.get(target, { token: null });
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ error: 'FORBIDDEN', message: 'Invalid link signature' });
    });

    it('answers 400 for malformed percent-encoding', async () => {
      const response = await app.http.get('/resources/files/data/%E0%A4%A?expires=1&sig=x', { token: null });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(badRequest("Failed to decode param '%E0%A4%A'"));
    });

    it('answers 404 for a validly signed path that is not in the index', async () => {
      const response = await fetchUrl(app, await signedLink(app, 'other/secret.txt', nowSeconds() + 60));
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'Resource "other/secret.txt" is not in the index' });
    });
  });
});

describe('Resources: rescan, packs and restarts', () => {
  let fixture: Fixture;
  let app: TestApp;
  let token: string;
  const api = () => app.http.withToken(token);
  const hashedAt = async () =>
    new Map(
      (await app.sql<{ path: string; hashed_at: Date }>('SELECT path, hashed_at FROM resource_file')).map((row) => [
        row.path,
        row.hashed_at.getTime(),
      ]),
    );

  beforeAll(async () => {
    fixture = new Fixture();
    // The folder does not exist yet: the service starts with an empty index.
    rmSync(fixture.root, { recursive: true });
    app = await startTestApp({ env: { RESOURCE_DIR: fixture.root } });
    token = (await onlineServer(app)).accessToken;
  });
  afterAll(async () => {
    await app.close();
    fixture.dispose();
  });

  it('starts with an empty index when RESOURCE_DIR does not exist', async () => {
    const manifest = await api().get('/resources/manifest', { query: { lang: true } });
    expect(manifest.status).toBe(200);
    expect(manifest.body).toEqual({ Data: [], Lang: [] });
    const response = await app.admin.post('/admin/resources/rescan');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: 0, lang: 0, packs: 0, bytes: 0 });
  });

  it('indexes new files on rescan and answers counts and bytes', async () => {
    fixture.write('data/a.json', 'a'.repeat(100));
    fixture.write('data/b.json', 'b'.repeat(200));
    fixture.write('data/c.json', 'c'.repeat(300));
    fixture.write('lang/en.json', '{}');
    fixture.write('packs/full.zip', randomBytes(4_096));
    fixture.write('packs/one.zip', randomBytes(1_024));
    const response = await app.admin.post('/admin/resources/rescan');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: 3, lang: 1, packs: 2, bytes: 100 + 200 + 300 + 2 + 4_096 + 1_024 });
    expect((await api().get('/resources/manifest', { query: { lang: true } })).body).toEqual({
      Data: fixture.entries('data/'),
      Lang: fixture.entries('lang/'),
    });
  });

  it('re-hashes a changed file and only that one', async () => {
    const before = await hashedAt();
    await new Promise((resolve) => setTimeout(resolve, 20));
    fixture.write('data/a.json', 'A'.repeat(150)); // new size
    fixture.write('data/b.json', 'B'.repeat(200)); // same size, new mtime
    utimesSync(join(fixture.root, 'data/b.json'), new Date(), new Date(Date.now() + 5_000));

    const response = await app.admin.post('/admin/resources/rescan');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: 3, lang: 1, packs: 2, bytes: 150 + 200 + 300 + 2 + 4_096 + 1_024 });

    const after = await hashedAt();
    expect(after.get('data/a.json')!).toBeGreaterThan(before.get('data/a.json')!);
    expect(after.get('data/b.json')!).toBeGreaterThan(before.get('data/b.json')!);
    for (const path of ['data/c.json', 'lang/en.json', 'packs/full.zip', 'packs/one.zip'])
      expect(after.get(path)).toBe(before.get(path));
    const rows = await app.sql('SELECT path, size, sha256 FROM resource_file WHERE path IN ($1, $2) ORDER BY path', [
      'data/a.json',
      'data/b.json',
    ]);
    expect(rows).toEqual([
      { path: 'data/a.json', size: '150', sha256: sha256(fixture.files.get('data/a.json')!) },
      { path: 'data/b.json', size: '200', sha256: sha256(fixture.files.get('data/b.json')!) },
    ]);
  });

  it('re-hashes nothing, and leaves the index version alone, when nothing changed', async () => {
    const before = await hashedAt();
    const version = await app.sql('SELECT version FROM resource_index_state');
    const response = await app.admin.post('/admin/resources/rescan');
    expect(response.status).toBe(200);
    expect(await hashedAt()).toEqual(before);
    expect(await app.sql('SELECT version FROM resource_index_state')).toEqual(version);
  });

  it('answers an index change made by another instance (through the database) at once', async () => {
    expect((await api().get('/resources/manifest')).body).toEqual({ Data: fixture.entries('data/'), Lang: [] });
    const other = 'f'.repeat(64);
    await app.sql(`UPDATE resource_file SET sha256 = $1 WHERE path = 'data/c.json'`, [other]);
    await app.sql('UPDATE resource_index_state SET version = version + 1');
    const response = await api().get('/resources/manifest');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      Data: fixture
        .entries('data/')
        .map((entry) => (entry.path === 'data/c.json' ? { ...entry, sha256: other } : entry)),
      Lang: [],
    });
    // The next scan sees the file unchanged on disk (same size and mtime) and keeps what is stored.
    await app.sql(`UPDATE resource_file SET sha256 = $1 WHERE path = 'data/c.json'`, [
      sha256(fixture.files.get('data/c.json')!),
    ]);
    await app.sql('UPDATE resource_index_state SET version = version + 1');
  });

  it('answers 401 on rescan without the admin token', async () => {
    const response = await app.http.post('/admin/resources/rescan', undefined, { token });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid admin token' });
  });

  describe('PUT /admin/packs and GET /resources/packmanifest', () => {
    const packs = [
      { name: 'song-1', displayName: 'Song 1', type: 'SONG', availableSongs: [1], file: 'packs/one.zip' },
      { name: 'base', displayName: 'Everything', type: 'FULL', availableSongs: [1, 2, 3], file: 'packs/full.zip' },
    ];

    it('stores the packs and lists them with size, sha1 and a working url', async () => {
      const response = await app.admin.put('/admin/packs', packs);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ upserted: 2 });

      const manifest = await api().get('/resources/packmanifest');
      expect(manifest.status).toBe(200);
      expect(manifest.body).toEqual(
        [packs[1], packs[0]].map(({ file, ...pack }) => ({
          ...pack,
          size: fixture.files.get(file)!.length,
          sha1: sha1(fixture.files.get(file)!),
          url: expect.stringMatching(
            new RegExp(
              `^http://localhost:0/resources/files/${file}\\?v=${sha1(fixture.files.get(file)!)}&sig=[A-Za-z0-9_-]{43}$`,
            ),
          ),
        })),
      );
      for (const entry of manifest.body as Array<{ name: string; url: string }>) {
        const file = packs.find((pack) => pack.name === entry.name)!.file;
        const download = await fetchUrl(app, entry.url);
        expect(download.status).toBe(200);
        expect(download.bytes.equals(fixture.files.get(file)!)).toBe(true);
      }
    });

    it('gives pack links that do not expire: a day later the pack manifest url still downloads, a download link does not', async () => {
      const [entry] = (await api().get<Array<{ name: string; url: string }>>('/resources/packmanifest')).body.filter(
        (pack) => pack.name === 'base',
      );
      const [download] = (await api().post('/resources/down', ['data/a.json'])).body;
      expect(entry.url).not.toMatch(/expires=/);
      jest.useFakeTimers({
        doNotFake: [
          'nextTick',
          'setImmediate',
          'clearImmediate',
          'setTimeout',
          'clearTimeout',
          'setInterval',
          'clearInterval',
          'queueMicrotask',
          'hrtime',
          'performance',
        ],
      });
      jest.setSystemTime(Date.now() + 2 * 86_400_000);
      try {
        const later = await fetchUrl(app, entry.url);
        expect(later.status).toBe(200);
        expect(later.bytes.equals(fixture.files.get('packs/full.zip')!)).toBe(true);
        const expired = await fetchUrl(app, download.url);
        expect(expired.status).toBe(403);
        expect(expired.body).toEqual({ error: 'FORBIDDEN', message: 'The link has expired' });
      } finally {
        jest.useRealTimers();
      }
    });

    it('refuses an altered pack link, and one that mixes both kinds', async () => {
      const [entry] = (await api().get<Array<{ name: string; url: string }>>('/resources/packmanifest')).body.filter(
        (pack) => pack.name === 'base',
      );
      const url = new URL(entry.url);
      const otherSha1 = 'f'.repeat(40);
      const cases: Array<[string, string]> = [
        [entry.url.replace(/v=[0-9a-f]{40}/, `v=${otherSha1}`), 'Invalid link signature'],
        [entry.url.replace('packs/full.zip', 'packs/one.zip'), 'Invalid link signature'],
        [`${entry.url}&expires=99999999999`, 'Missing or malformed link signature'],
        [
          `${url.origin}${url.pathname}?v=nothex&sig=${url.searchParams.get('sig')}`,
          'Missing or malformed link signature',
        ],
      ];
      for (const [link, message] of cases) {
        const answer = await fetchUrl(app, link);
        expect({ link, status: answer.status, body: answer.body }).toEqual({
          link,
          status: 403,
          body: { error: 'FORBIDDEN', message },
        });
      }
    });

    it('stops a pack link once the pack changes; the pack manifest then gives a new one', async () => {
      const before = (
        await api().get<Array<{ name: string; url: string; sha1: string }>>('/resources/packmanifest')
      ).body.find((pack) => pack.name === 'base')!;
      const original = fixture.files.get('packs/full.zip')!;
      fixture.write('packs/full.zip', 'a new build of the pack');
      expect((await app.admin.post('/admin/resources/rescan')).status).toBe(200);
      const old = await fetchUrl(app, before.url);
      expect(old.status).toBe(404);
      expect(old.body).toEqual({
        error: 'NOT_FOUND',
        message: 'The pack "packs/full.zip" changed since this link was issued; load the pack manifest again',
      });
      const after = (
        await api().get<Array<{ name: string; url: string; sha1: string }>>('/resources/packmanifest')
      ).body.find((pack) => pack.name === 'base')!;
      expect(after.sha1).toBe(sha1(Buffer.from('a new build of the pack')));
      expect(after.url).not.toBe(before.url);
      const fresh = await fetchUrl(app, after.url);
      expect(fresh.status).toBe(200);
      expect(fresh.bytes.toString()).toBe('a new build of the pack');
      // Back as it was, for the tests after this one.
      fixture.write('packs/full.zip', original);
      expect((await app.admin.post('/admin/resources/rescan')).status).toBe(200);
    });

    it('updates an existing pack by name', async () => {
      const response = await app.admin.put('/admin/packs', [
        { ...packs[1], displayName: 'All songs', type: 'CHAPTER', availableSongs: [3, 2, 2, 1] },
      ]);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ upserted: 1 });
      expect(
        await app.sql('SELECT name, display_name, type, available_songs, file FROM resource_pack ORDER BY name'),
      ).toEqual([
        {
          name: 'base',
          display_name: 'All songs',
          type: 'CHAPTER',
          available_songs: [3, 2, 1],
          file: 'packs/full.zip',
        },
        { name: 'song-1', display_name: 'Song 1', type: 'SONG', available_songs: [1], file: 'packs/one.zip' },
      ]);
    });

    it.each([
      [
        [
          { ...packs[0], name: 'new-one' },
          { ...packs[1], type: 'HALF' },
        ],
        '[1].type must be one of FULL, CHAPTER, SONG',
      ],
      [
        [
          { ...packs[0], name: 'new-one' },
          { ...packs[1], file: 'packs/missing.zip' },
        ],
        '[1].file: "packs/missing.zip" is not in the resource index',
      ],
      [[{ ...packs[0], name: 'new-one', file: 'packs/../data/a.json' }], '[0].file must not contain a ".." segment'],
      [[{ ...packs[0], name: 'new-one', file: '/packs/one.zip' }], '[0].file must be relative (no leading "/")'],
      [[{ ...packs[0], name: 'new-one', file: 'data/a.json' }], '[0].file must name a .zip file directly under packs/'],
      [
        [
          { ...packs[0], name: 'new-one' },
          { ...packs[0], name: 'new-one' },
        ],
        '[1].name: "new-one" is already given at [0]',
      ],
      [
        [{ ...packs[0], name: 'new-one', availableSongs: [1, 'two'] }],
        '[0].availableSongs must contain only ids up to 2147483647; [0].availableSongs must contain only ids of 0 or more; [0].availableSongs must contain only integers',
      ],
      [
        [{ ...packs[0], name: 'new-one', availableSongs: [-1] }],
        '[0].availableSongs must contain only ids of 0 or more',
      ],
      [[{ ...packs[0], name: 'new-one', extra: 1 }], '[0].extra: property extra should not exist'],
      [[{ ...packs[0], name: 'new-one', toString: 1 }], '[0].toString: property toString should not exist'],
      [[{ ...packs[0], name: '' }], '[0].name should not be empty'],
      [
        [{ displayName: 'x', type: 'SONG', availableSongs: [], file: 'packs/one.zip' }],
        '[0].name must be shorter than or equal to 128 characters; [0].name should not be empty; [0].name must be a string',
      ],
      [[{ ...packs[0], name: 'new-one' }, 'packs/one.zip'], '[1] must be a JSON object'],
      [{ ...packs[0] }, 'The request body must be a JSON array'],
    ])('refuses the whole batch with 400 (%#) and stores nothing', async (body, message) => {
      const before = await app.sql('SELECT * FROM resource_pack ORDER BY name');
      const response = await app.admin.put('/admin/packs', body);
      expect(response.status).toBe(400);
      expect(response.body).toEqual(
        message.startsWith('The ') ? badRequest(message) : badLines(...message.split('; ')),
      );
      expect(await app.sql('SELECT * FROM resource_pack ORDER BY name')).toEqual(before);
    });

    it('answers 401 on PUT /admin/packs without the admin token', async () => {
      const response = await app.http.put('/admin/packs', packs, { token });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ error: 'UNAUTHORIZED', message: 'Invalid admin token' });
    });
  });

  it('drops deleted files from the index, the manifest and the pack manifest; their links answer 404', async () => {
    const [dataLink] = (await api().post('/resources/down', ['data/c.json'])).body;
    fixture.remove('data/c.json');
    fixture.remove('packs/one.zip');

    const response = await app.admin.post('/admin/resources/rescan');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: 2, lang: 1, packs: 1, bytes: 150 + 200 + 2 + 4_096 });
    expect(await app.sql('SELECT path FROM resource_file ORDER BY path')).toEqual(
      ['data/a.json', 'data/b.json', 'lang/en.json', 'packs/full.zip'].map((path) => ({ path })),
    );
    expect((await api().get('/resources/manifest')).body).toEqual({ Data: fixture.entries('data/'), Lang: [] });
    expect((await api().post('/resources/down', ['data/c.json'])).body).toEqual({
      error: 'NOT_FOUND',
      message: 'Unknown resource paths (1): "data/c.json"',
    });
    expect((await api().get<Array<{ name: string }>>('/resources/packmanifest')).body.map((pack) => pack.name)).toEqual(
      ['base'],
    );

    const download = await fetchUrl(app, dataLink.url);
    expect(download.status).toBe(404);
    expect(download.body).toEqual({ error: 'NOT_FOUND', message: 'Resource "data/c.json" is not in the index' });
  });

  it('answers 404 for a file changed on disk since the last scan', async () => {
    const [entry] = (await api().post('/resources/down', ['data/a.json'])).body;
    fixture.write('data/a.json', 'changed');
    const download = await fetchUrl(app, entry.url);
    expect(download.status).toBe(404);
    expect(download.body).toEqual({
      error: 'NOT_FOUND',
      message: 'Resource "data/a.json" changed since it was indexed',
    });
    await app.admin.post('/admin/resources/rescan');
    const fresh = await fetchUrl(app, (await api().post('/resources/down', ['data/a.json'])).body[0].url);
    expect(fresh.bytes.toString()).toBe('changed');
  });

  it('withdraws a pack with DELETE /admin/packs/{name}: its link answers 404 once no pack offers the file', async () => {
    const base = {
      name: 'base',
      displayName: 'Everything',
      type: 'FULL',
      availableSongs: [1, 2, 3],
      file: 'packs/full.zip',
    };
    const link = async () =>
      (await api().get<Array<{ name: string; url: string }>>('/resources/packmanifest')).body.find(
        (pack) => pack.name === 'base',
      )!.url;
    const withdrawn = {
      error: 'NOT_FOUND',
      message: 'No pack offers "packs/full.zip" any more; load the pack manifest again',
    };
    // A second description of the same file: the link is the file's, so it works while either is described.
    expect((await app.admin.put('/admin/packs', [{ ...base, name: 'base-copy' }])).status).toBe(200);
    const url = await link();
    expect((await fetchUrl(app, url)).status).toBe(200);
    expect((await app.admin.delete('/admin/packs/base-copy')).status).toBe(204);
    expect((await fetchUrl(app, url)).status).toBe(200);

    expect((await app.admin.delete('/admin/packs/base')).status).toBe(204);
    const again = await app.admin.delete('/admin/packs/base');
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: 'NOT_FOUND', message: 'No pack named "base"' });
    expect((await api().get('/resources/packmanifest')).body).toEqual([]);
    for (const method of ['GET', 'HEAD']) {
      const answer = await fetchUrl(app, url, { method, headers: { Range: 'bytes=0-9' } });
      expect({ method, status: answer.status, body: answer.body }).toEqual({
        method,
        status: 404,
        body: method === 'GET' ? withdrawn : undefined,
      });
    }

    // Described again with the file unchanged, the same (content-addressed) link works again.
    expect((await app.admin.put('/admin/packs', [base])).status).toBe(200);
    expect(await link()).toBe(url);
    expect((await fetchUrl(app, url)).bytes.equals(fixture.files.get('packs/full.zip')!)).toBe(true);
    // A pack moved to another file withdraws the old file's link too.
    fixture.write('packs/other.zip', 'another pack');
    expect((await app.admin.post('/admin/resources/rescan')).status).toBe(200);
    expect((await app.admin.put('/admin/packs', [{ ...base, file: 'packs/other.zip' }])).status).toBe(200);
    expect((await fetchUrl(app, url)).body).toEqual(withdrawn);
    expect((await fetchUrl(app, await link())).bytes.toString()).toBe('another pack');
    expect((await app.admin.delete('/admin/packs/base')).status).toBe(204);
  });

  it.each([
    ['a NUL character', 'nul%00name'],
    ['129 characters', 'x'.repeat(129)],
  ])('answers DELETE /admin/packs/{name} with a name no pack can have (%s) with 400', async (_label, name) => {
    const response = await app.admin.delete(`/admin/packs/${name}`);
    expect(response.status).toBe(400);
    expect(response.body).toEqual(badLines('name must be 1 to 128 characters without the NUL character'));
  });

  it('keeps links valid across a restart (the signing key is stored) and rescans at start-up', async () => {
    const [entry] = (await api().post('/resources/down', ['data/b.json'])).body;
    fixture.write('data/new.json', '{"new":true}');
    await app.restart();
    token = (await onlineServer(app)).accessToken;

    const download = await fetchUrl(app, entry.url);
    expect(download.status).toBe(200);
    expect(download.bytes.equals(fixture.files.get('data/b.json')!)).toBe(true);
    expect((await api().get('/resources/manifest')).body).toEqual({ Data: fixture.entries('data/'), Lang: [] });
  });
});

describe('Resources behind a CDN (CDN_BASE_URL)', () => {
  let fixture: Fixture;
  let app: TestApp;
  let token: string;

  beforeAll(async () => {
    fixture = standardFixture();
    app = await startTestApp({ env: { RESOURCE_DIR: fixture.root, CDN_BASE_URL: 'https://cdn.example.org/rhythmc/' } });
    token = (await onlineServer(app)).accessToken;
  });
  afterAll(async () => {
    await app.close();
    fixture.dispose();
  });

  it('answers CDN_BASE_URL/<path> as url, with no signature and no token', async () => {
    const response = await app.http
      .withToken(token)
      .post('/resources/down', ['data/songs/1/chart.json', 'lang/de/de_de.json', 'data/ui/icon set/ümlaut & co.png']);
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      {
        path: 'data/songs/1/chart.json',
        url: 'https://cdn.example.org/rhythmc/data/songs/1/chart.json',
        bytes: fixture.files.get('data/songs/1/chart.json')!.length,
        sha256: sha256(fixture.files.get('data/songs/1/chart.json')!),
      },
      {
        path: 'lang/de/de_de.json',
        url: 'https://cdn.example.org/rhythmc/lang/de/de_de.json',
        bytes: fixture.files.get('lang/de/de_de.json')!.length,
        sha256: sha256(fixture.files.get('lang/de/de_de.json')!),
      },
      {
        path: 'data/ui/icon set/ümlaut & co.png',
        url: 'https://cdn.example.org/rhythmc/data/ui/icon%20set/%C3%BCmlaut%20%26%20co.png',
        bytes: 1_000,
        sha256: sha256(fixture.files.get('data/ui/icon set/ümlaut & co.png')!),
      },
    ]);
  });

  it('answers CDN urls in the pack manifest', async () => {
    await app.admin.put('/admin/packs', [
      { name: 'all', displayName: 'All', type: 'FULL', availableSongs: [1, 2, 10], file: 'packs/full.zip' },
    ]);
    const response = await app.http.withToken(token).get('/resources/packmanifest');
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      {
        name: 'all',
        displayName: 'All',
        type: 'FULL',
        availableSongs: [1, 2, 10],
        size: 200_000,
        sha1: sha1(fixture.files.get('packs/full.zip')!),
        url: 'https://cdn.example.org/rhythmc/packs/full.zip',
      },
    ]);
  });
});

(multiInstanceAvailable() ? describe : describe.skip)('Pack links on two instances', () => {
  let fixture: Fixture;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    fixture = standardFixture();
    a = await startTestApp({ env: { RESOURCE_DIR: fixture.root } });
    b = await startTestApp({ shareWith: a, env: { RESOURCE_DIR: fixture.root } });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    fixture.dispose();
  });

  it('a pack withdrawn on one instance is 404 on the other at once', async () => {
    const pack = {
      name: 'chapter',
      displayName: 'Chapter',
      type: 'CHAPTER',
      availableSongs: [1],
      file: 'packs/song-1.zip',
    };
    expect((await a.admin.put('/admin/packs', [pack])).status).toBe(200);
    const token = (await onlineServer(b)).accessToken;
    const [entry] = (await b.http.withToken(token).get<Array<{ url: string }>>('/resources/packmanifest')).body;
    expect((await fetchUrl(b, entry.url)).bytes.equals(fixture.files.get('packs/song-1.zip')!)).toBe(true);

    expect((await a.admin.delete('/admin/packs/chapter')).status).toBe(204);
    const answer = await fetchUrl(b, entry.url);
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 404,
      body: { error: 'NOT_FOUND', message: 'No pack offers "packs/song-1.zip" any more; load the pack manifest again' },
    });
  });
});
