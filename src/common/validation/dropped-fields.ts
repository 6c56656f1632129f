import { ValidationError } from 'class-validator';
import { isJsonObject } from './json-object';

/**
 * The paths (as key lists) of `plain`'s keys that are not own fields of `instance`, the DTO
 * class-transformer built from it: unknown fields the whitelist stripped, and keys
 * class-transformer never copied. It skips a key that names a method of the DTO's prototype
 * chain (`valueOf`, `toString`, `hasOwnProperty`…), so class-validator's whitelist never sees
 * such a key and a strict body carrying one would pass. Descends into nested DTOs (class
 * instances, not plain objects) and arrays of them (an element's index is a path key), so
 * free-form maps such as player options are never counted.
 */
export function droppedFields(plain: unknown, instance: unknown, parent: string[] = []): string[][] {
  if (Array.isArray(plain) && Array.isArray(instance))
    return plain.flatMap((element, i) => droppedFields(element, instance[i], [...parent, String(i)]));
  if (!isJsonObject(plain)) return [];
  if (typeof instance !== 'object' || instance === null || Object.getPrototypeOf(instance) === Object.prototype)
    return [];
  const kept = instance as Record<string, unknown>;
  return Object.entries(plain).flatMap(([key, value]) => {
    const path = [...parent, key];
    if (!Object.hasOwn(kept, key)) return [path];
    return droppedFields(value, kept[key], path);
  });
}

/** Dropped fields as class-validator's unknown-field errors (`property x should not exist`), nested under their parents. */
export function unknownFieldErrors(paths: string[][]): ValidationError[] {
  const errors: ValidationError[] = [];
  for (const path of paths) {
    let level = errors;
    path.forEach((property, depth) => {
      let error = level.find((candidate) => candidate.property === property);
      if (!error) {
        error = Object.assign(new ValidationError(), { property, children: [] });
        level.push(error);
      }
      if (depth === path.length - 1)
        error.constraints = { ...error.constraints, whitelistValidation: `property ${property} should not exist` };
      level = error.children ??= [];
    });
  }
  return errors;
}
