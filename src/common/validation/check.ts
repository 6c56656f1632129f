import { ValidateBy, ValidationArguments } from 'class-validator';

/**
 * One rule of a field as one class-validator constraint with its own message (a field with several
 * Check rules lists each failed one). `test` sees the whole object too (rules that depend on a
 * sibling field). `name` must be unique within the field.
 */
export function Check(
  name: string,
  test: (value: unknown, object: Record<string, unknown>) => boolean,
  message: string | ((value: unknown) => string),
): PropertyDecorator {
  return ValidateBy({
    name,
    validator: {
      validate: (value: unknown, args?: ValidationArguments) =>
        test(value, (args?.object ?? {}) as Record<string, unknown>),
      defaultMessage: (args?: ValidationArguments) => (typeof message === 'string' ? message : message(args?.value)),
    },
  });
}
