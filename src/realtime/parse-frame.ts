import { Type } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validate } from 'class-validator';
import { BadRequestError } from '../common/errors/app-error';
import { validationProblems } from '../common/validation/describe-errors';

/** The fields a frame DTO validates, from its class-validator rules. */
function fieldsOf(dto: Type<object>): string[] {
  const rules = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  return [...new Set(rules.map((rule) => rule.propertyName))];
}

/**
 * A client frame's `data` as its DTO (dto/realtime.dto.ts), or a 400 BadRequestError naming the
 * first problem in field order (a frame answers one problem, as it always has). Unknown fields
 * are dropped, not refused: the plugin's frames may grow.
 *
 * Only the DTO's own fields reach class-transformer, and every one of them is a JSON scalar, so an
 * object or array sent in its place is handed over as `null` (its rules refuse both with the same
 * message). class-transformer walks every value it is given, at about 1 µs a value, and makes each
 * object's key list unique with indexOf, quadratic in its key count: a 36 KiB frame with an
 * 18,000-element array, or unknown keys by the thousand, held the event loop for 15 ms to 0.9 s.
 * A frame DTO with a nested field would need its own bound here.
 */
export async function parseFrameData<T extends object>(dto: Type<T>, data: Record<string, unknown>): Promise<T> {
  const fields: Record<string, unknown> = {};
  for (const field of fieldsOf(dto)) {
    if (!Object.hasOwn(data, field)) continue;
    const value = data[field];
    fields[field] = typeof value === 'object' && value !== null ? null : value;
  }
  const instance = plainToInstance(dto, fields);
  const errors = await validate(instance, {
    whitelist: true,
    forbidNonWhitelisted: false,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
  });
  const [first] = validationProblems(errors);
  if (first !== undefined) throw new BadRequestError(first.line, [first]);
  return instance;
}
