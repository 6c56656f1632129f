import { buildMessage, ValidateBy, ValidationOptions } from 'class-validator';

/**
 * A string's length as PostgreSQL counts it for `varchar(n)`: in code points. class-validator's
 * MaxLength/Length (validator.js isLength) count UTF-16 units minus surrogate pairs *and minus
 * every U+FE0E/U+FE0F variation selector*, so `'a\uFE0F'.repeat(64)` measured 64 there and 128
 * in the column: the insert failed and the route answered 500.
 */
export function textLength(value: string): number {
  let length = 0;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    length++;
  }
  return length;
}

/**
 * A string of at most `max` characters counted like its varchar column (textLength). Non-strings
 * fail too. The message is MaxLength's, so answers read as before.
 */
export function IsText(max: number, validationOptions?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isText',
      constraints: [max],
      validator: {
        validate: (value: unknown): boolean => typeof value === 'string' && textLength(value) <= max,
        defaultMessage: buildMessage(
          (eachPrefix) => `${eachPrefix}$property must be shorter than or equal to $constraint1 characters`,
          validationOptions,
        ),
      },
    },
    validationOptions,
  );
}
