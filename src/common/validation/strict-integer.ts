import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** PostgreSQL's `integer` (serial ids, level ids) and `bigint` (bigserial ids: uids, play ids) maxima. */
export const INT4_MAX = 2_147_483_647;
export const INT8_MAX = 9_223_372_036_854_775_807n;

/**
 * Whether `text` is a decimal integer written with digits only, at most `maxDigits` of them
 * (leading zeros count). Nothing else is: no sign, space, point, exponent, `0x`, empty text, and no
 * array (a repeated query parameter) or other non-string value.
 */
function digitsOnly(text: unknown, maxDigits: number): text is string {
  return typeof text === 'string' && text.length <= maxDigits && /^\d+$/.test(text);
}

/**
 * The one reading of "an integer from text" for query and path values: digits only, at most
 * `maxDigits`, a safe integer from `min` to `max`; null for anything else (the caller words the 400).
 */
export function strictInteger(text: unknown, min: number, max: number, maxDigits = 16): number | null {
  if (!digitsOnly(text, maxDigits)) return null;
  const value = Number(text);
  return Number.isSafeInteger(value) && value >= min && value <= max ? value : null;
}

/** strictInteger for `bigint` columns: the value as a bigint (callers keep it as its decimal string). */
export function strictBigInteger(text: unknown, min: bigint, max: bigint, maxDigits = 19): bigint | null {
  if (!digitsOnly(text, maxDigits)) return null;
  const value = BigInt(text);
  return value >= min && value <= max ? value : null;
}

/**
 * For a query DTO's integer field: text that strictInteger reads becomes the number, anything else
 * (`1.5`, `1e1`, ` 5`, `0x10`, an empty value, a repeated parameter) stays as sent and fails the
 * field's IsInt, so the field's own message answers.
 */
export const StrictInt = () =>
  Transform(({ value }: { value: unknown }) => strictInteger(value, 0, Number.MAX_SAFE_INTEGER) ?? value);

/**
 * An optional query integer from `min` to `max` of a query DTO, read strictly (StrictInt); any bad
 * value is 400 `<name> must be an integer from <min> to <max>`.
 */
export function QueryIntRange(name: string, min: number, max: number): PropertyDecorator {
  const message = `${name} must be an integer from ${min} to ${max}`;
  return applyDecorators(IsOptional(), StrictInt(), IsInt({ message }), Min(min, { message }), Max(max, { message }));
}
