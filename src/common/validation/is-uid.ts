import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { ApiParam } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';

/**
 * A player uid ("long" on the wire): a positive integer as a JSON number (up to 2^53) or a
 * string of digits. Carried as a string in code so bigint values never lose precision.
 */
export function IsUid() {
  return applyDecorators(
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value,
    ),
    IsString({ message: '$property must be a positive integer' }),
    Matches(/^[1-9]\d{0,17}$/, { message: '$property must be a positive integer' }),
  );
}

/** OpenAPI schema of a uid in a request body: what IsUid accepts. */
export const UID_REQUEST_SCHEMA = {
  oneOf: [
    { type: 'integer', format: 'int64', minimum: 1 },
    { type: 'string', pattern: '^[1-9]\\d{0,17}$' },
  ],
};

/** OpenAPI doc of a `{uid}` path parameter (ParseBigIdPipe: a positive bigint). */
export const ApiUidParam = () =>
  ApiParam({ name: 'uid', description: 'Player uid', schema: { type: 'integer', format: 'int64', minimum: 1 } });
