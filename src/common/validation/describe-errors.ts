import type { ValidationError } from 'class-validator';

/**
 * class-validator's errors as one message per problem, each naming its full path
 * (`player.playerUID must be …`, `[3].levelId must be …` under a `[3]` parent).
 */
export function describeValidationErrors(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((text) =>
      // class-validator messages start with the bare property name; show the full path instead.
      text.startsWith(`${error.property} `) ? `${path}${text.slice(error.property.length)}` : `${path}: ${text}`,
    );
    return [...own, ...describeValidationErrors(error.children ?? [], path)];
  });
}
