import { applyDecorators } from '@nestjs/common';
import { buildMessage, IsNotEmpty, IsString, ValidateBy, ValidationOptions } from 'class-validator';

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

/** Whether the text holds a C0 or C1 control character or DEL. */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20 || (unit >= 0x7f && unit <= 0x9f)) return true;
  }
  return false;
}

/**
 * A name staff give a thing and read back in lists, the console and the CLI (an API key, a
 * webhook, a season): a string of 1 to `max` characters (IsText) with at least one visible one and
 * no control character. A blank name was a blank row; an escape sequence (`\u001b[31m`) printed by
 * the CLI recoloured or moved the terminal it ran in.
 */
export function IsLabel(max: number): PropertyDecorator {
  return applyDecorators(
    IsString(),
    IsNotEmpty(),
    IsText(max),
    ValidateBy({
      name: 'isLabel',
      validator: {
        // '' is IsNotEmpty's to refuse (one message a problem).
        validate: (value: unknown): boolean =>
          typeof value === 'string' && (value === '' || (/\S/u.test(value) && !hasControl(value))),
        defaultMessage: buildMessage(
          (eachPrefix) => `${eachPrefix}$property must hold a visible character and no control character`,
        ),
      },
    }),
  );
}
