import { Type } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { BadRequestError } from '../common/errors/app-error';
import { describeValidationErrors } from '../common/validation/describe-errors';

/**
 * A client frame's `data` as its DTO (dto/realtime.dto.ts), or a 400 BadRequestError naming the
 * first problem in field order (a frame answers one problem, as it always has). Unknown fields
 * are dropped, not refused: the plugin's frames may grow.
 */
export async function parseFrameData<T extends object>(dto: Type<T>, data: Record<string, unknown>): Promise<T> {
  const instance = plainToInstance(dto, data);
  const errors = await validate(instance, {
    whitelist: true,
    forbidNonWhitelisted: false,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
  });
  const [first] = describeValidationErrors(errors);
  if (first !== undefined) throw new BadRequestError(first);
  return instance;
}
