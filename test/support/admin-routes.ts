import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { AUDITED_KEY } from '../../src/audit/audited.decorator';
import { AUTH_KIND_KEY, PERMISSION_KEY } from '../../src/auth/auth.decorators';
import type { Permission } from '../../src/auth/permissions';
import type { TestApp } from './test-app';

export interface AdminRoute {
  /** `METHOD /path` with Nest's parameters (`/admin/players/:uid`). */
  route: string;
  /** The handler's @Permission, else its controller's; null: none (refused to everyone). */
  permission: Permission | null;
  audited: boolean;
}

/** Every controller handler of the running app under @AdminAuth(), sorted by route. */
export function adminRoutes(app: Pick<TestApp, 'get'>): AdminRoute[] {
  const routes: AdminRoute[] = [];
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
        const own = <T>(key: string) =>
          (Reflect.getMetadata(key, handler) ?? Reflect.getMetadata(key, controller)) as T | undefined;
        if (own<string>(AUTH_KIND_KEY) !== 'admin') continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
        const path = `${String(Reflect.getMetadata(PATH_METADATA, controller))}/${String(Reflect.getMetadata(PATH_METADATA, handler))}`;
        routes.push({
          route: `${method} /${path.replace(/\/+$/, '').replace(/\/{2,}/g, '/')}`,
          permission: own<Permission>(PERMISSION_KEY) ?? null,
          audited: Reflect.getMetadata(AUDITED_KEY, handler) !== undefined,
        });
      }
    }
  }
  return routes.sort((a, b) => a.route.localeCompare(b.route));
}
