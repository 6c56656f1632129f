import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { BadRequestError } from '../errors/app-error';
import { UNKNOWN_FIELD } from '../validation/describe-errors';

/**
 * A route without query parameters: any parameter is 400, worded as the ValidationPipe words an
 * unknown one (the routes with parameters refuse unknown ones the same way).
 */
export const NoQuery = createParamDecorator((_: unknown, ctx: ExecutionContext): void => {
  const [name] = Object.keys(ctx.switchToHttp().getRequest<Request>().query);
  if (name !== undefined) {
    const shown = name.slice(0, 64);
    throw new BadRequestError(`${shown}: property ${shown} should not exist`, [
      { field: shown, message: UNKNOWN_FIELD },
    ]);
  }
});
