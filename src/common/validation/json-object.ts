/**
 * A JSON object: an object that is neither null nor an array. What JSON.parse gives for `{…}`;
 * a class instance passes too (use isPlainObject to tell them apart).
 */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object literal or a JSON-parsed object, never a class instance (an Error, a Date, a DTO). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}
