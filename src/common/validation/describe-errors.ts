import type { ValidationError } from 'class-validator';
import type { FieldProblem } from '../errors/field-problem';

/** A problem of a class-validator error, and the line the 400's `message` lists it with. */
export interface DescribedProblem extends FieldProblem {
  line: string;
}

/** The `errors` message of a field the DTO does not have (`message` keeps the whitelist's wording). */
export const UNKNOWN_FIELD = 'unknown field';

/**
 * class-validator's errors as problems, one per broken rule, each naming its full path
 * (`player.playerUID`), with its line (`player.playerUID must be …`). A message that starts with the
 * bare property name, or with the full path (a nested DTO's message written as `closeRule.top must
 * be …`), loses it in `message`; one that starts with `property.part: ` (a custom message naming a
 * part of the field) names that part as the field. ValidateNested's own message for a value that is
 * not an object ("nested property x must be either object or array") is left out when the field's
 * own rules already said what is wrong with it.
 */
export function validationProblems(errors: ValidationError[], parent = ''): DescribedProblem[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const constraints = Object.entries(error.constraints ?? {});
    const rules = constraints.length > 1 ? constraints.filter(([rule]) => rule !== 'nestedValidation') : constraints;
    const own = rules.map(([rule, text]): DescribedProblem => {
      if (parent && text.startsWith(`${path} `)) {
        return { field: path, message: text.slice(path.length + 1), line: text };
      }
      if (text.startsWith(`${error.property} `)) {
        return {
          field: path,
          message: text.slice(error.property.length + 1),
          line: `${path}${text.slice(error.property.length)}`,
        };
      }
      const line = `${path}: ${text}`;
      if (rule === 'whitelistValidation') return { field: path, message: UNKNOWN_FIELD, line };
      const part = text.startsWith(`${error.property}.`) ? text.indexOf(': ') : -1;
      if (part > 0) {
        const prefix = parent ? `${parent}.` : '';
        return { field: `${prefix}${text.slice(0, part)}`, message: text.slice(part + 2), line };
      }
      return { field: path, message: text, line };
    });
    return [...own, ...validationProblems(error.children ?? [], path)];
  });
}
