import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { BadRequestError } from '../errors/app-error';

export interface QueryEnumOptions<T extends string> {
  name: string;
  values: readonly T[];
  /** Used when the parameter is absent; without one an absent parameter gives `undefined`. */
  default?: T;
}

/** Parses one query parameter as one of `values`: anything else (a repeated parameter too) is 400 naming it. */
export function parseQueryEnum<T extends string>(raw: unknown, options: QueryEnumOptions<T>): T | undefined {
  if (raw === undefined) return options.default;
  if (typeof raw !== 'string' || !(options.values as readonly string[]).includes(raw)) {
    throw new BadRequestError(`${options.name} must be one of ${options.values.join(', ')}`);
  }
  return raw as T;
}

export const QueryEnum = createParamDecorator((options: QueryEnumOptions<string>, ctx: ExecutionContext): string | undefined =>
  parseQueryEnum(ctx.switchToHttp().getRequest<Request>().query[options.name], options),
);
