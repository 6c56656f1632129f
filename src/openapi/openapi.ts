import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import {
  ADMIN_TOKEN_SCHEME,
  BOOTSTRAP_TOKEN_SCHEME,
  CSRF_TOKEN_SCHEME,
  PUBLIC_API_KEY_SCHEME,
  SERVER_TOKEN_SCHEME,
  STAFF_SESSION_COOKIE,
  STAFF_SESSION_SCHEME,
} from './security-schemes';
import type { AppConfig } from '../config/app-config';
import { packageVersion } from '../config/package-version';
import { TAG_DESCRIPTIONS } from './api-tags';
import { WEBSOCKET_DESCRIPTION } from './websocket.description';

/** Where the API docs are served (outside Nest's router: no guard, no token). */
export const DOCS_PATH = '/docs';
export const OPENAPI_JSON_PATH = '/docs/openapi.json';

const DESCRIPTION = `The remote backend of the rhythmc game-server plugin.

Every body is JSON (UTF-8, at most 256 KiB). Every non-2xx answer has the body \`{"error": CODE, "message": text}\`
(schema \`ErrorResponse\`); 426 adds \`toVersion\` and \`downUrl\`, 430 adds \`reason\` and \`until\`, 429 sends \`Retry-After\`.
Times are ISO 8601 local date-times without zone (\`YYYY-MM-DDTHH:mm:ss\`).

Authentication is a bearer token in \`Authorization\`. Routes need the **server access token** unless they say otherwise:
the **bootstrap token** is accepted by \`POST /server/login\` only, the **admin token** by \`/admin\` only, a **public API
key** by \`/public/v1\` only (or none there, where the operator turned the anonymous tier on), and a few routes (ping,
health, signed resource files, these docs) are public.

${WEBSOCKET_DESCRIPTION}`;

type Operation = { security?: Record<string, string[]>[] };

/**
 * The OpenAPI 3 document of every HTTP route, built from the controllers' and DTOs' decorators.
 * A route without an auth decorator gets the server-token scheme here, as it does in the guard.
 */
export function buildOpenApiDocument(app: INestApplication, config: AppConfig): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('rhythmc backend')
    .setDescription(DESCRIPTION)
    .setVersion(packageVersion())
    // "Try it out" calls the first server: the address the docs were opened at (a relative URL:
    // no CORS between an internal address and PUBLIC_BASE_URL); the public address is the second.
    .addServer('/', 'The address these docs were opened at')
    .addServer(config.publicBaseUrl, 'PUBLIC_BASE_URL')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        description: 'Server access token from POST /server/login or GET /server/refresh',
      },
      SERVER_TOKEN_SCHEME,
    )
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', description: 'Bootstrap token of one game server (POST /server/login only)' },
      BOOTSTRAP_TOKEN_SCHEME,
    )
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        description:
          "ADMIN_TOKEN of the service (the owner's break-glass key), or a staff member's personal API token (rst_…); /admin only",
      },
      ADMIN_TOKEN_SCHEME,
    )
    .addSecurity(STAFF_SESSION_SCHEME, {
      type: 'apiKey',
      in: 'cookie',
      name: STAFF_SESSION_COOKIE,
      description: 'A console session from POST /admin/session (HttpOnly, SameSite=Strict); only with its X-CSRF-Token',
    })
    .addSecurity(CSRF_TOKEN_SCHEME, {
      type: 'apiKey',
      in: 'header',
      name: 'X-CSRF-Token',
      description: "The session's CSRF token (the csrfToken of the sign-in, also in the rhythmc_csrf cookie)",
    })
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        description:
          'A public API key (`rpk_…`) from POST /admin/api-keys, with the scope the route names (/public/v1 only)',
      },
      PUBLIC_API_KEY_SCHEME,
    );
  for (const [name, description] of Object.entries(TAG_DESCRIPTIONS)) builder.addTag(name, description);

  const document = SwaggerModule.createDocument(app, builder.build(), {
    operationIdFactory: (controllerKey, methodKey) => `${controllerKey.replace(/Controller$/, '')}_${methodKey}`,
  });
  for (const path of Object.values(document.paths)) {
    for (const operation of Object.values(path) as Operation[]) {
      if (typeof operation !== 'object' || operation === null) continue;
      if (operation.security === undefined) operation.security = [{ [SERVER_TOKEN_SCHEME]: [] }];
      // The public API without a key: only where this deployment turned the anonymous tier on.
      else if (
        config.publicApiAnonymousRateLimit > 0 &&
        operation.security.some((requirement) => PUBLIC_API_KEY_SCHEME in requirement)
      )
        operation.security = [...operation.security, {}];
      // @Public() records an empty requirement; no requirement at all says the same more plainly.
      else if (operation.security.every((requirement) => Object.keys(requirement).length === 0))
        operation.security = [];
    }
  }
  return document;
}

/**
 * Serves the UI at /docs and the document at /docs/openapi.json. The document is built once, at
 * the first request for it: building it walks every route and DTO, 140–230 ms of the main thread
 * that every start paid before (a third of a test service's start), for a page few open.
 */
export function setupOpenApi(app: INestApplication, config: AppConfig): void {
  SwaggerModule.setup(DOCS_PATH, app, () => buildOpenApiDocument(app, config), {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    raw: ['json'],
    customSiteTitle: 'rhythmc backend API',
  });
}
