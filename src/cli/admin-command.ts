/** What every admin CLI command is made of (src/cli/admin.ts runs them; admin-reads.ts holds the reads). */
import type { paths } from '../admin-client/client';
export type OptionSpec =
  | { type: 'string'; multiple?: boolean; value: string; help: string; required?: boolean }
  | { type: 'boolean'; help: string };

export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** JSON text of the body. */
  body?: string;
}

export interface Parsed {
  positionals: string[];
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
}

export interface Command {
  /** `<group> <action>` */
  name: string;
  /** Positional arguments, in order. */
  args: string[];
  options: Record<string, OptionSpec>;
  summary: string;
  /** Longer help: what it calls and what it answers. */
  details: string;
  build(parsed: Parsed): Call;
  /** Reads only: the answer as readable text (the default); `--json` prints the JSON instead. */
  render?(body: unknown): string;
}

/** A mistake in the command line: usage text, exit 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command: Command | null = null,
    /** Shown instead of the command's (or the general) usage. */
    readonly usage: string | null = null,
  ) {
    super(message);
  }
}

/**
 * One path segment, percent-encoded. Empty, `.` and `..` are refused (exit 2): URL resolution
 * drops them, `%2E%2E` included, so `staff revoke-token 3 ..` would otherwise become
 * DELETE /admin/staff/3 (another route, the account's delete).
 */
export function segment(value: string): string {
  if (value === '' || value === '.' || value === '..')
    throw new UsageError(`"${value}" is not a valid value for a path parameter`);
  return encodeURIComponent(value);
}

export function text(values: Parsed['values'], name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** The JSON body of an operation's 200 answer, as the OpenAPI document gives it. */
type Json200<Operation> = Operation extends { responses: { 200: { content: { 'application/json': infer Body } } } }
  ? Body
  : never;

/** The admin reads (GET routes answering JSON) of the generated client: `/admin/players/{uid}`, … */
export type AdminRead = {
  [Route in keyof paths]: Route extends `/admin/${string}`
    ? [Json200<paths[Route]['get']>] extends [never]
      ? never
      : Route
    : never;
}[keyof paths];

/** What GET `Route` answers (the generated response type). */
export type ReadAnswer<Route extends AdminRead> = Json200<paths[Route]['get']>;

/** The query parameters GET `Route` documents. */
export type ReadQuery<Route extends AdminRead> = keyof NonNullable<
  NonNullable<paths[Route]['get']>['parameters']['query']
> &
  string;

/**
 * A read command typed by its route: `render` gets the answer the OpenAPI document gives for it
 * (src/admin-client, generated), so a field the service no longer answers is a compile error here.
 * The JSON the service sent is taken as documented (test/e2e/openapi.e2e-spec.ts holds the
 * document to the real answers).
 */
export function readCommand<Route extends AdminRead>(
  route: Route,
  command: Omit<Command, 'render' | 'details'> & { details: string; render(body: ReadAnswer<Route>): string },
): Command {
  return {
    ...command,
    details: `GET ${route}. ${command.details}`.trim(),
    render: (body) => command.render(body as ReadAnswer<Route>),
  };
}

/** The routes of the generated client that take `method`. */
export type RouteOf<Method extends Call['method']> = {
  [Route in keyof paths]: [NonNullable<paths[Route][Lowercase<Method>]>] extends [never] ? never : Route;
}[keyof paths];

/** `route` with its `{name}` parameters filled in from `values` (percent-encoded), e.g. `/admin/players/1002`. */
export function routePath(route: keyof paths, values: Record<string, string>): string {
  return route.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`${route}: no value for {${name}}`);
    return segment(value);
  });
}

/**
 * The method and path of a call: `route` is a path of the OpenAPI document that takes `method`
 * (a typo, or a route the service does not have, does not compile), its `{name}` parameters
 * filled in from `values`, then `query` (`?…` or '').
 */
export function call<Method extends Call['method']>(
  method: Method,
  route: RouteOf<Method>,
  values: Record<string, string> = {},
  query = '',
): { method: Method; path: string } {
  return { method, path: `${routePath(route, values)}${query}` };
}
