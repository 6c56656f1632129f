import { RequestMethod, type Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ROUTE_METRIC_KEY, type RouteMetric } from '../common/decorators/route-metric.decorator';

/** `POST /server/login`: a request's method and the route pattern that served it (common/http/route.ts). */
export const routeKey = (method: string, route: string): string => `${method.toUpperCase()} ${route}`;

const pathsOf = (metadata: unknown): string[] =>
  Array.isArray(metadata) ? metadata.map(String) : [typeof metadata === 'string' ? metadata : ''];

/** Nest's route path: controller path then handler path, each with one leading slash, no trailing one. */
function joinPath(controllerPath: string, handlerPath: string): string {
  const parts = [controllerPath, handlerPath]
    .map((part) => part.replace(/^\/+|(?<!\/)\/+$/g, ''))
    .filter((part) => part !== '');
  return `/${parts.join('/')}`;
}

/**
 * The routes that carry `@CountAs(…)`, by `METHOD /pattern`, read from the handlers' metadata of
 * these controllers. Each must be a route of the running router (`registered`, the same keys):
 * otherwise the start fails, rather than a counter silently staying at zero.
 */
export function routeMetricsOf(
  controllers: readonly Type[],
  registered: ReadonlySet<string>,
): Map<string, RouteMetric> {
  const metrics = new Map<string, RouteMetric>();
  for (const controller of controllers) {
    const prototype = controller.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const handler = prototype[name];
      if (name === 'constructor' || typeof handler !== 'function') continue;
      const metric = Reflect.getMetadata(ROUTE_METRIC_KEY, handler) as RouteMetric | undefined;
      if (metric === undefined) continue;
      const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
      for (const controllerPath of pathsOf(Reflect.getMetadata(PATH_METADATA, controller)))
        for (const handlerPath of pathsOf(Reflect.getMetadata(PATH_METADATA, handler))) {
          const key = routeKey(method, joinPath(controllerPath, handlerPath));
          if (!registered.has(key))
            throw new Error(`@CountAs('${metric}') on ${controller.name}.${name}: ${key} is not a route of the router`);
          metrics.set(key, metric);
        }
    }
  }
  return metrics;
}

/** `METHOD /pattern` of every route an Express router holds. */
export function expressRoutes(router: {
  stack: readonly { route?: { path: unknown; methods: Record<string, boolean> } }[];
}): Set<string> {
  const routes = new Set<string>();
  for (const layer of router.stack) {
    if (layer.route === undefined || typeof layer.route.path !== 'string') continue;
    for (const [method, on] of Object.entries(layer.route.methods))
      if (on) routes.add(routeKey(method, layer.route.path));
  }
  return routes;
}
