import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { BadRequestError } from '../errors/app-error';

export interface QueryIntOptions {
  name: string;
  min: number;
  max: number;
  /** Used when the parameter is absent; without one an absent parameter gives `undefined`. */
  default?: number;
}

/**
 * Parses one query parameter as a decimal integer in [min, max]. Strict on purpose: `1.5`, `1e1`,
 * ` 5`, an empty value or a repeated parameter are 400 naming the parameter. (A custom decorator
 * sees the raw text: the global ValidationPipe would have turned `''` into 0 and `1e1` into 10.)
 */
export function parseQueryInt(raw: unknown, options: QueryIntOptions): number | undefined {
  if (raw === undefined) return options.default;
  const text = typeof raw === 'string' ? raw : null;
  const value = text !== null && /^\d{1,16}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < options.min || value > options.max) {
    throw new BadRequestError(`${options.name} must be an integer from ${options.min} to ${options.max}`);
  }
  return value;
}

export const QueryInt = createParamDecorator((options: QueryIntOptions, ctx: ExecutionContext): number | undefined =>
  parseQueryInt(ctx.switchToHttp().getRequest<Request>().query[options.name], options),
);
