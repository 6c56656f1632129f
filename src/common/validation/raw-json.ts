import { Transform } from 'class-transformer';

/**
 * A free-form JSON value of a body (a map the plugin or staff own: the player's options, a
 * collection's unlock rule and properties), handed to the route exactly as parsed. Without it
 * class-transformer copies an object key by key into a new `{}` and skips every key that names a
 * function of Object.prototype there (`valueOf`, `toString`, `hasOwnProperty`, …), at any depth:
 * such keys were dropped without a word. (`__proto__`, `constructor` and `prototype` never get
 * this far: json-body-check.ts refuses them.)
 */
export const RawJson = (): PropertyDecorator =>
  Transform(({ obj, key }: { obj: Record<string, unknown>; key: string }) => obj[key], { toClassOnly: true });
