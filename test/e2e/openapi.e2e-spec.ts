import { HttpAdapterHost, ModulesContainer } from '@nestjs/core';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { AUTH_KIND_KEY } from '../../src/auth/auth.decorators';
import { PERMISSIONS, type Permission } from '../../src/auth/permissions';
import { ERROR_CODES } from '../../src/common/errors/app-error';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOCS_PATH, OPENAPI_JSON_PATH } from '../../src/openapi/openapi';
import { createPlayer, loginPlayer } from '../factories/player.factory';
import { createServer, onlineServer } from '../factories/server.factory';
import { startTestApp, TestApp } from '../support/test-app';

type Schema = {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
  [key: string]: unknown;
};
type Media = { schema?: Schema };
type Operation = {
  operationId: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
  'x-permission'?: { name: string; role: string };
};
type Document = {
  openapi: string;
  info: { title: string; description: string; version: string };
  servers: Array<{ url: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    securitySchemes: Record<string, { type: string; scheme?: string; in?: string; name?: string }>;
  };
};

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * Routes of the running app that are not API routes and so are not in the document: the
 * documentation itself (the UI page, its init script, its assets and the JSON), mounted under
 * /docs by SwaggerModule.setup. Nothing else may be left out.
 */
const isDocsRoute = (path: string) => path === DOCS_PATH || path.startsWith(`${DOCS_PATH}/`);

/** Express path syntax to OpenAPI: `:uid` and `*path` become `{uid}` and `{path}`. */
const toOpenApiPath = (path: string) => path.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}');

interface ExpressLayer {
  name: string;
  route?: { path: string | string[]; methods: Record<string, boolean> };
}

/** Every method + path registered on the Express router of the running app. */
function registeredRoutes(app: TestApp): { method: string; path: string }[] {
  const express = app.get(HttpAdapterHost).httpAdapter.getInstance<{ router: { stack: ExpressLayer[] } }>();
  const routes: { method: string; path: string }[] = [];
  for (const layer of express.router.stack) {
    // A mounted sub-router hides its routes from this walk: make it fail loudly rather than pass.
    if (layer.name === 'router') throw new Error('A sub-router is mounted; extend registeredRoutes() to walk it');
    if (!layer.route) continue;
    const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
    for (const path of paths) {
      for (const method of Object.keys(layer.route.methods)) routes.push({ method, path });
    }
  }
  return routes;
}

interface Handler {
  operationId: string;
  method: string;
  takesBody: boolean;
  authKind: string;
}

/** Every controller handler Nest knows, with what the OpenAPI document must say about it. */
function nestHandlers(app: TestApp): Handler[] {
  const handlers: Handler[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: unknown[]) => unknown) | null;
      if (!controller) continue;
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, unknown>)[name];
        if (
          name === 'constructor' ||
          typeof handler !== 'function' ||
          Reflect.getMetadata(PATH_METADATA, handler) === undefined
        )
          continue;
        const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {}) as Record<string, unknown>;
        handlers.push({
          operationId: `${controller.name.replace(/Controller$/, '')}_${name}`,
          method: RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod].toLowerCase(),
          takesBody: Object.keys(args).some((key) => key.startsWith(`${RouteParamtypes.BODY}:`)),
          // The guard's rule: the handler's decorator, else the controller's, else a server token.
          authKind: (Reflect.getMetadata(AUTH_KIND_KEY, handler) ??
            Reflect.getMetadata(AUTH_KIND_KEY, controller) ??
            'server') as string,
        });
      }
    }
  }
  return handlers;
}

describe('API docs (OpenAPI at /docs)', () => {
  let app: TestApp;
  let document: Document;
  let operations: { method: string; path: string; operation: Operation }[];

  const schemaOf = (ref: string | undefined): Schema => {
    const name = ref?.replace('#/components/schemas/', '') ?? '';
    const schema = document.components.schemas[name];
    if (!schema) throw new Error(`No schema ${ref}`);
    return schema;
  };
  const operation = (method: string, path: string): Operation => {
    const found = document.paths[path]?.[method];
    if (!found) throw new Error(`${method} ${path} is not documented`);
    return found;
  };
  const jsonSchema = (media: Record<string, Media> | undefined): Schema | undefined =>
    media?.['application/json']?.schema;
  const isErrorSchema = (schema: Schema | undefined) => {
    if (!schema?.$ref) return false;
    const resolved = schemaOf(schema.$ref);
    return ['error', 'message'].every(
      (field) => resolved.required?.includes(field) && resolved.properties?.[field] !== undefined,
    );
  };

  beforeAll(async () => {
    app = await startTestApp();
    const response = await app.http.get(OPENAPI_JSON_PATH, { token: null });
    expect(response.status).toBe(200);
    document = response.body as Document;
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ method, path, operation })),
    );
  });
  afterAll(async () => {
    await app.close();
  });

  it('serves an OpenAPI 3 document at /docs/openapi.json without a token', async () => {
    const response = await app.http.get(OPENAPI_JSON_PATH, { token: 'not-a-token' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(document.openapi).toMatch(/^3\./);
    expect(document.info.title).toBe('rhythmc backend');
    expect(Object.keys(document.paths).length).toBeGreaterThan(0);
  });

  it('lets "Try it out" call the address the docs were opened at first, PUBLIC_BASE_URL second', () => {
    expect(document.servers).toEqual([
      { url: '/', description: 'The address these docs were opened at' },
      { url: app.config.publicBaseUrl, description: 'PUBLIC_BASE_URL' },
    ]);
  });

  it('is the document the admin client is generated from (src/admin-client/openapi.json), bar PUBLIC_BASE_URL', () => {
    // `npm run client:generate` builds it offline with a fixed configuration; the service builds it at start.
    const generated = JSON.parse(
      readFileSync(join(__dirname, '..', '..', 'src', 'admin-client', 'openapi.json'), 'utf8'),
    ) as Document;
    const withoutServers = ({ servers: _servers, ...rest }: Document) => rest;
    expect(app.config.publicApiAnonymousRateLimit).toBe(0);
    expect(withoutServers(document)).toEqual(withoutServers(generated));
  });

  it('serves the UI at /docs as HTML without a token', async () => {
    const response = await app.http.get(DOCS_PATH, { token: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.text).toContain('swagger-ui');
  });

  it('opens nothing but the docs: other routes still need their token, unknown /docs paths are 404 error bodies', async () => {
    const charts = await app.http.get('/server/charts', { token: null });
    expect(charts.status).toBe(401);
    expect(charts.body).toEqual({ error: 'UNAUTHORIZED', message: 'Missing bearer server access token' });
    const unknown = await app.http.get(`${DOCS_PATH}/no-such-file`, { token: null });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'NOT_FOUND', message: 'Not found' });
  });

  it('documents every route the running app has registered, and nothing it has not', () => {
    const registered = registeredRoutes(app).filter((route) => !isDocsRoute(route.path));
    expect(registered.length).toBeGreaterThan(30);
    for (const route of registered) expect(HTTP_METHODS).toContain(route.method);
    const actual = registered.map((route) => `${route.method.toUpperCase()} ${toOpenApiPath(route.path)}`).sort();
    const documented = operations.map(({ method, path }) => `${method.toUpperCase()} ${path}`).sort();
    expect(documented).toEqual(actual);
    // The health routes and the signed resource download are among them (a spot check of the walk).
    expect(actual).toEqual(
      expect.arrayContaining(['GET /health', 'GET /health/ready', 'GET /resources/files/{path}', 'GET /server/ping']),
    );
  });

  it('registers the hot routes first: Express tries a request against every route before its own', () => {
    const order = registeredRoutes(app)
      .filter((route) => !isDocsRoute(route.path))
      .map((route) => `${route.method.toUpperCase()} ${route.path}`);
    // The plugin's upload and boards, the public reads, baltop and the player's login and balance
    // (docs/decisions.md "Route order"); before, the plugin's boards were route 95 of 108 and the public
    // profile route 59.
    const hot = [
      'POST /player/upload',
      'GET /server/leaderboards/atp',
      'GET /server/leaderboards/charts/:levelId',
      'GET /public/v1/boards/atp',
      'GET /public/v1/boards/charts/:levelId',
      'GET /public/v1/players/:uid',
      'POST /player/economy',
      'GET /server/baltop',
      'POST /player/login',
    ];
    expect(order.length).toBeGreaterThan(100);
    expect(order).toEqual(expect.arrayContaining(hot));
    // Each of them among the first 45 routes (the list of those that are not is empty).
    expect(
      hot.filter((route) => order.indexOf(route) >= 45).map((route) => `${route} is route ${order.indexOf(route)}`),
    ).toEqual([]);
  });

  it("documents every controller handler with the guard's scheme and a body exactly where the handler reads one", () => {
    const byId = new Map(operations.map((entry) => [entry.operation.operationId, entry]));
    const handlers = nestHandlers(app);
    expect(handlers.length).toBe(operations.length);
    const expectedSecurity: Record<string, Record<string, string[]>[]> = {
      public: [],
      admin: [{ adminToken: [] }, { staffSession: [], csrfToken: [] }],
      'sign-in': [],
      bootstrap: [{ bootstrapToken: [] }],
      server: [{ serverAccessToken: [] }],
      'server-refresh': [{ serverAccessToken: [] }],
      // The anonymous tier is off by default: the key only.
      'api-key': [{ publicApiKey: [] }],
    };
    for (const handler of handlers) {
      const entry = byId.get(handler.operationId);
      expect({ handler: handler.operationId, documented: entry !== undefined }).toEqual({
        handler: handler.operationId,
        documented: true,
      });
      expect({ handler: handler.operationId, method: entry?.method }).toEqual({
        handler: handler.operationId,
        method: handler.method,
      });
      expect({ handler: handler.operationId, security: entry?.operation.security }).toEqual({
        handler: handler.operationId,
        security: expectedSecurity[handler.authKind],
      });
      expect({ handler: handler.operationId, body: entry?.operation.requestBody !== undefined }).toEqual({
        handler: handler.operationId,
        body: handler.takesBody,
      });
    }
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual([
      'adminToken',
      'bootstrapToken',
      'csrfToken',
      'publicApiKey',
      'serverAccessToken',
      'staffSession',
    ]);
    for (const name of ['adminToken', 'bootstrapToken', 'serverAccessToken'])
      expect(document.components.securitySchemes[name]).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.components.securitySchemes.staffSession).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'rhythmc_session',
    });
    expect(document.components.securitySchemes.csrfToken).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-CSRF-Token',
    });
  });

  it('names the permission of every admin operation, and the lowest role that holds it (x-permission)', () => {
    const admin = operations.filter(({ operation }) =>
      (operation.security ?? []).some((requirement) => 'adminToken' in requirement),
    );
    expect(admin.length).toBeGreaterThan(40);
    for (const { method, path, operation } of admin) {
      const permission = operation['x-permission'];
      expect({ route: `${method} ${path}`, known: permission !== undefined && permission.name in PERMISSIONS }).toEqual(
        {
          route: `${method} ${path}`,
          known: true,
        },
      );
      expect(permission?.role).toBe(PERMISSIONS[permission?.name as Permission].role);
    }
    expect(
      operations.find(({ path, method }) => path === '/admin/staff' && method === 'get')?.operation['x-permission'],
    ).toEqual({
      name: 'staff.manage',
      role: 'owner',
    });
  });

  it('documents every /admin/servers route as an operation of one controller, ServerAdminController', () => {
    const servers = operations
      .filter(({ path }) => path === '/admin/servers' || path.startsWith('/admin/servers/'))
      .map(({ method, path, operation }) => `${method.toUpperCase()} ${path} ${operation.operationId}`)
      .sort();
    expect(servers).toEqual([
      'GET /admin/servers ServerAdmin_listServers',
      'POST /admin/servers ServerAdmin_createServer',
      'POST /admin/servers/{serverID}/bootstrap-token ServerAdmin_rotateBootstrapToken',
      'POST /admin/servers/{serverID}/logout ServerAdmin_logoutServer',
    ]);
  });

  it('gives every operation a 2xx answer with a schema (or no content)', () => {
    for (const { method, path, operation } of operations) {
      const success = Object.keys(operation.responses).filter((status) => /^2\d\d$/.test(status));
      expect({ route: `${method} ${path}`, success: success.length > 0 }).toEqual({
        route: `${method} ${path}`,
        success: true,
      });
      for (const status of success) {
        const content = operation.responses[status].content;
        const schema = content && Object.values(content)[0]?.schema;
        expect({
          route: `${method} ${path}`,
          status,
          hasSchema: status === '204' ? content === undefined : schema !== undefined,
        }).toEqual({
          route: `${method} ${path}`,
          status,
          hasSchema: true,
        });
      }
    }
  });

  it('documents the error answers with the shared {error, message} schema', () => {
    for (const { method, path, operation } of operations) {
      const route = `${method} ${path}`;
      const errors = Object.entries(operation.responses).filter(([status]) => /^[45]\d\d$/.test(status));
      for (const [status, response] of errors) {
        expect({ route, status, errorSchema: isErrorSchema(jsonSchema(response.content)) }).toEqual({
          route,
          status,
          errorSchema: true,
        });
      }
      // Only a public route without any input (ping, health) has no client error to answer.
      // /metrics is public to the session guard but has its own optional token (METRICS_TOKEN → 401).
      const ownToken = route === 'get /metrics';
      const takesInput =
        ownToken ||
        (operation.parameters ?? []).length > 0 ||
        operation.requestBody !== undefined ||
        (operation.security ?? []).length > 0;
      const clientErrors = errors.filter(([status]) => status.startsWith('4'));
      expect({ route, clientErrors: clientErrors.length > 0 }).toEqual({ route, clientErrors: takesInput });
      // Every JSON body can be malformed or too large.
      if (operation.requestBody)
        expect({ route, statuses: Object.keys(operation.responses) }).toEqual({
          route,
          statuses: expect.arrayContaining(['400', '413']),
        });
    }
    const codes = document.components.schemas.ErrorCode;
    expect(codes.enum).toEqual([...ERROR_CODES]);
  });

  it('documents errors on every 400: the problems by field, the example listing what its message names', () => {
    for (const { method, path, operation } of operations) {
      const response = operation.responses['400'];
      if (!response) continue;
      const ref = jsonSchema(response.content)?.$ref;
      expect({ route: `${method} ${path}`, ref }).toEqual({
        route: `${method} ${path}`,
        ref: '#/components/schemas/BadRequestResponse',
      });
    }
    const body = schemaOf('#/components/schemas/BadRequestResponse');
    expect(body.required).toEqual(['error', 'message', 'errors']);
    const entry = schemaOf('#/components/schemas/FieldProblemResponse');
    expect(entry.required).toEqual(['field', 'message']);
    expect(Object.keys(entry.properties ?? {})).toEqual(['index', 'field', 'message']);
    const example = (route: Operation) =>
      (route.responses['400'].content?.['application/json'] as { example?: unknown } | undefined)?.example;
    expect(example(operation('get', '/server/baltop'))).toEqual({
      error: 'BAD_REQUEST',
      message: 'limit must be an integer from 1 to 100',
      errors: [{ field: 'limit', message: 'must be an integer from 1 to 100' }],
    });
    expect(example(operation('post', '/server/login'))).toMatchObject({ errors: expect.any(Array) });
  });

  it('documents Retry-After on every 503 (the database unreachable, out of resources or read-only; SQL rank counts at their limit) but readiness, and on no other status besides 429', () => {
    const responses = operations.flatMap(({ method, path, operation }) =>
      Object.entries(operation.responses).map(([status, response]) => ({
        entry: `${status} ${method} ${path}`,
        retryAfter: Boolean((response as { headers?: Record<string, unknown> }).headers?.['Retry-After']),
      })),
    );
    const unavailable = responses.filter(({ entry }) => entry.startsWith('503 '));
    expect(unavailable.length).toBeGreaterThan(40);
    expect(unavailable.filter(({ retryAfter }) => !retryAfter).map(({ entry }) => entry)).toEqual([
      '503 get /health/ready',
    ]);
    const others = responses.filter(({ entry, retryAfter }) => retryAfter && !/^(429|503) /.test(entry));
    expect(others).toEqual([]);
  });

  it('describes POST /server/login exactly: request fields, the answer of interface.md, 426 and 401', async () => {
    const login = operation('post', '/server/login');
    const request = schemaOf(jsonSchema(login.requestBody?.content)?.$ref);
    expect(request.required).toEqual(['pluginVersion', 'pluginSHA']);
    expect(request.properties?.pluginVersion).toMatchObject({ type: 'integer', minimum: 0 });
    expect(request.properties?.pluginSHA).toMatchObject({ type: 'string', maxLength: 128 });
    expect(request.properties?.serverAuthToken).toMatchObject({ type: 'string', deprecated: true });

    const answer = schemaOf(jsonSchema(login.responses['200'].content)?.$ref);
    const fields = [
      'serverID',
      'serverName',
      'assetServer',
      'serverIP',
      'country',
      'wsServer',
      'accessToken',
      'expiresIn',
    ];
    expect(Object.keys(answer.properties ?? {})).toEqual(fields);
    expect(answer.required).toEqual(fields);
    expect(answer.properties?.serverID.type).toBe('integer');
    expect(answer.properties?.expiresIn.type).toBe('integer');

    const upgrade = schemaOf(jsonSchema(login.responses['426'].content)?.$ref);
    expect(upgrade.required).toEqual(['error', 'message', 'toVersion', 'downUrl']);
    expect(Object.keys(login.responses).sort()).toEqual(['200', '400', '401', '413', '426', '429', '500', '503']);

    // The documented answer is the real one.
    const server = await createServer(app);
    const real = await app.http.post(
      '/server/login',
      { pluginVersion: 1, pluginSHA: 'abc' },
      { token: server.bootstrapToken },
    );
    expect(real.status).toBe(200);
    expect(Object.keys(real.body).sort()).toEqual([...fields].sort());
  });

  it('describes player login with its ban answer, economy with wattHour ≥ 0, baltop with its limit', () => {
    const playerLogin = operation('post', '/player/login');
    expect(Object.keys(playerLogin.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '409',
      '413',
      '429',
      '430',
      '500',
      '503',
    ]);
    expect(schemaOf(jsonSchema(playerLogin.responses['430'].content)?.$ref).required).toEqual([
      'error',
      'message',
      'reason',
      'until',
    ]);
    const loginBody = schemaOf(jsonSchema(playerLogin.requestBody?.content)?.$ref);
    expect(loginBody.required).toEqual(['mode', 'version']);
    expect(schemaOf((loginBody.properties?.mode.allOf as Schema[])[0].$ref).enum).toEqual([
      'ONLINE',
      'TOKEN',
      'OFFLINE_REFRESH',
    ]);

    const economy = schemaOf(jsonSchema(operation('post', '/player/economy').requestBody?.content)?.$ref);
    expect(economy.required).toEqual(['uid', 'accessToken', 'wattHour']);
    expect(economy.properties?.wattHour).toMatchObject({ type: 'integer', minimum: 0 });

    const baltop = operation('get', '/server/baltop');
    expect(baltop.parameters).toEqual([
      expect.objectContaining({
        name: 'limit',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
      }),
    ]);
    expect(jsonSchema(baltop.responses['200'].content)).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/RankingEntryResponse' },
    });
    expect(Object.keys(schemaOf('#/components/schemas/RankingEntryResponse').properties ?? {})).toEqual([
      'rank',
      'uid',
      'username',
      'displayName',
      'wattHour',
    ]);

    const upload = schemaOf(jsonSchema(operation('post', '/player/upload').requestBody?.content)?.$ref);
    expect(upload.required).toEqual(['player', 'server', 'payload']);
    expect(schemaOf(upload.properties?.player.$ref).required).toEqual(['playerUID', 'accessToken', 'timestamp']);
    expect(schemaOf(upload.properties?.payload.$ref).properties?.levelID).toMatchObject({ type: 'integer' });
  });

  it('documents the answers the service really gives (player profile, balance, ranking)', async () => {
    const fieldsOf = (schema: Schema) => ({
      properties: Object.keys(schema.properties ?? {}).sort(),
      required: [...(schema.required ?? [])].sort(),
    });
    const server = await onlineServer(app);
    const player = await loginPlayer(app, server, await createPlayer(app));

    const profile = fieldsOf(schemaOf(jsonSchema(operation('post', '/player/login').responses['200'].content)?.$ref));
    expect(Object.keys(player.profile).sort()).toEqual(profile.properties);
    expect(profile.required).toEqual(profile.properties);
    const options = schemaOf('#/components/schemas/PlayerProfileResponse').properties?.options as Schema;
    expect(Object.keys(player.profile.options)).toEqual(expect.arrayContaining(options.required ?? []));

    const balance = await app.http.post(
      '/player/economy',
      { uid: player.uid, accessToken: player.accessToken, wattHour: 5 },
      { token: server.accessToken },
    );
    expect(balance.status).toBe(200);
    expect(Object.keys(balance.body).sort()).toEqual(
      fieldsOf(schemaOf(jsonSchema(operation('post', '/player/economy').responses['200'].content)?.$ref)).properties,
    );

    const ranking = await app.http.get('/server/baltop', { token: server.accessToken });
    expect(ranking.status).toBe(200);
    expect(ranking.body).toHaveLength(1);
    expect(Object.keys(ranking.body[0]).sort()).toEqual(
      fieldsOf(schemaOf('#/components/schemas/RankingEntryResponse')).required,
    );
  });

  it("documents a webhook's secret rotation as it answers: the webhook, the new secret, the old one's end", async () => {
    const fieldsOf = (ref: string | undefined) => Object.keys(schemaOf(ref).properties ?? {}).sort();
    const created = await app.admin.post('/admin/webhooks', {
      name: 'docs',
      url: 'https://webhook.invalid/docs',
      events: ['player.banned'],
    });
    expect(created.status).toBe(201);
    const rotated = await app.admin.post(`/admin/webhooks/${created.body.id as number}/secret`, { overlapSeconds: 60 });
    expect(rotated.status).toBe(201);
    const documented = operation('post', '/admin/webhooks/{id}/secret');
    expect(Object.keys(rotated.body).sort()).toEqual(fieldsOf(jsonSchema(documented.responses['201'].content)?.$ref));
    expect(Object.keys(rotated.body)).toEqual(expect.arrayContaining(['secret', 'previousSecretExpiresAt']));
    expect(fieldsOf(jsonSchema(documented.requestBody?.content)?.$ref)).toEqual(['overlapSeconds']);
    expect(Object.keys(documented.responses).sort()).toEqual([
      '201',
      '400',
      '401',
      '403',
      '404',
      '413',
      '429',
      '500',
      '503',
    ]);
  });

  it('documents the public API as it answers: its fields, RateLimit-* fields, ETag, 304 and 429', async () => {
    const fieldsOf = (ref: string | undefined) => {
      const schema = schemaOf(ref);
      return { properties: Object.keys(schema.properties ?? {}).sort(), required: [...(schema.required ?? [])].sort() };
    };
    const created = await app.admin.post('/admin/api-keys', { name: 'docs', scopes: ['read:boards', 'read:players'] });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(
      fieldsOf(jsonSchema(operation('post', '/admin/api-keys').responses['201'].content)?.$ref).properties,
    );
    const player = await createPlayer(app, { username: 'DocsPlayer' });
    const key = created.body.key as string;
    const profile = await app.http.get(`/public/v1/players/${player.uid}`, { token: key });
    expect(profile.status).toBe(200);
    const profileFields = fieldsOf(
      jsonSchema(operation('get', '/public/v1/players/{uid}').responses['200'].content)?.$ref,
    );
    // wattHour only where PUBLIC_API_FIELDS turns it on.
    expect(Object.keys(profile.body).sort()).toEqual(profileFields.properties.filter((name) => name !== 'wattHour'));
    expect(profileFields.required).toEqual(profileFields.properties.filter((name) => name !== 'wattHour'));
    const search = await app.http.get('/public/v1/players', { token: key, query: { name: 'docsplayer' } });
    expect(Object.keys(search.body.players[0]).sort()).toEqual(
      fieldsOf('#/components/schemas/PublicPlayerSummary').properties,
    );
    for (const { method, path, operation: documented } of operations.filter((entry) =>
      entry.path.startsWith('/public/'),
    )) {
      const route = `${method} ${path}`;
      const statuses = Object.keys(documented.responses);
      expect({ route, statuses }).toEqual({
        route,
        statuses: expect.arrayContaining(['200', '304', '401', '403', '429']),
      });
      const headersOf = (status: string) =>
        Object.keys((documented.responses[status] as { headers?: Record<string, unknown> }).headers ?? {}).sort();
      expect({ route, headers: headersOf('200') }).toEqual({
        route,
        headers: [
          'Cache-Control',
          'ETag',
          'RateLimit-Limit',
          'RateLimit-Policy',
          'RateLimit-Remaining',
          'RateLimit-Reset',
        ],
      });
      expect({ route, headers: headersOf('429') }).toEqual({
        route,
        headers: ['RateLimit-Limit', 'RateLimit-Policy', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After'],
      });
    }
    for (const header of [
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'ratelimit-policy',
      'etag',
      'cache-control',
    ])
      expect({ header, present: profile.headers.get(header) !== null }).toEqual({ header, present: true });
  });

  it('describes the WebSocket protocol in the document description', () => {
    const description = document.info.description;
    for (const needle of [
      '/ws',
      'Authorization: Bearer',
      '401',
      'resume_session',
      'chat',
      'kick_player',
      '4001',
      '4002',
      '1001',
    ]) {
      expect({ needle, found: description.includes(needle) }).toEqual({ needle, found: true });
    }
  });
});
