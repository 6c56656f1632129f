/**
 * Rules every JSON body must meet whatever the route, checked once after parsing (decisions in
 * docs/decisions.md "Errors"); WebSocket frames meet the same ones (src/realtime/realtime-ws.adapter.ts):
 * - no string (value or key) holds the NUL character: PostgreSQL text and jsonb cannot store it;
 * - every string is well-formed Unicode (no lone surrogate): it could not be stored as sent;
 * - no key is `__proto__`, `constructor` or `prototype`: Nest's ValidationPipe deletes those keys
 *   silently (so `{"name": …, "__proto__": …}` passed the unknown-field check, and an option with
 *   such a key was dropped), and they are the keys of prototype pollution;
 * - nesting is at most MAX_JSON_DEPTH levels: the validation pipe, class-transformer and the
 *   jsonb encoder all recurse, and a few thousand levels exhausted the stack (a 500);
 * - an object has at most MAX_JSON_KEYS keys: class-transformer (the validation pipe) makes each
 *   object's key list unique with indexOf, quadratic in its key count, and one object of 16,000
 *   keys held the event loop for half a second.
 */

import { BadRequestError } from '../errors/app-error';

/** Objects and arrays inside one another; no body of the interface needs more than a handful. */
export const MAX_JSON_DEPTH = 64;

/** Keys of one object; the interface's objects have a few dozen at most, its maps (options) as many. */
export const MAX_JSON_KEYS = 1000;

/** Keys of prototype pollution: refused in a body (here) and in a query (AppValidationPipe). */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function stringProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain the NUL character (\\u0000)';
  if (LONE_SURROGATE.test(text)) return 'must not contain a lone surrogate (\\ud800-\\udfff)';
  return null;
}

interface Visit {
  value: unknown;
  /** 1 for the body itself. */
  depth: number;
  parent: Visit | null;
  key: string | number | null;
}

/** `options.sound.volume`, `[3].name`, `options["a b"]`; the root is `root` ("the request body"). */
function pathOf(visit: Visit, root: string): string {
  let path = '';
  for (const key of keysOf(visit)) {
    if (typeof key === 'number') path += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) path += path === '' ? key : `.${key}`;
    else path += `[${JSON.stringify(key)}]`;
  }
  return path === '' ? root : path;
}

/**
 * The first problem found in a parsed JSON body, as a 400 message; null when there is none.
 * `root` names the value itself in the message: "the request body", "the frame".
 */
export function jsonBodyProblem(body: unknown, root = 'the request body'): string | null {
  return findProblem(body, root)?.message ?? null;
}

/**
 * jsonBodyProblem as the 400 to answer. A text value that breaks a rule is a field's problem (its
 * path in `errors`, by index when the body is a list: `{index: 0, field: 'name'}`); the other rules
 * (depth, key count, keys) are about the JSON as a whole and list no field.
 */
export function jsonBodyError(body: unknown, root = 'the request body'): BadRequestError | null {
  const found = findProblem(body, root);
  if (found === null) return null;
  if (found.field === undefined) return new BadRequestError(found.message);
  const keys = found.field.keys;
  const index = typeof keys[0] === 'number' ? keys[0] : undefined;
  const field = (index === undefined ? keys : keys.slice(1)).join('.');
  return new BadRequestError(found.message, [
    { ...(index === undefined ? {} : { index }), field, message: found.field.problem },
  ]);
}

interface FoundProblem {
  message: string;
  /** Set when a text value breaks a rule: where it is, and what is wrong with it. */
  field?: { keys: (string | number)[]; problem: string };
}

function keysOf(visit: Visit): (string | number)[] {
  const keys: (string | number)[] = [];
  for (let at: Visit | null = visit; at !== null && at.key !== null; at = at.parent) keys.push(at.key);
  return keys.reverse();
}

function findProblem(body: unknown, root: string): FoundProblem | null {
  const at = (visit: Visit) => pathOf(visit, root);
  // Iterative, so a hostile nesting depth cannot exhaust the stack here.
  const pending: Visit[] = [{ value: body, depth: 1, parent: null, key: null }];
  while (pending.length > 0) {
    const visit = pending.pop() as Visit;
    const { value } = visit;
    if (typeof value === 'string') {
      const problem = stringProblem(value);
      if (problem !== null) return { message: `${at(visit)} ${problem}`, field: { keys: keysOf(visit), problem } };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (visit.depth > MAX_JSON_DEPTH)
      return {
        message: `${root[0].toUpperCase()}${root.slice(1)} nests deeper than ${MAX_JSON_DEPTH} levels (at ${at(visit)})`,
      };
    const depth = visit.depth + 1;
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--)
        pending.push({ value: value[index], depth, parent: visit, key: index });
      continue;
    }
    // The keys alone (not Object.entries: an array per key, 2.6× the time on 6,000 keys) and counted
    // before anything else is done with them.
    const keys = Object.keys(value);
    if (keys.length > MAX_JSON_KEYS) return { message: `${at(visit)} has more than ${MAX_JSON_KEYS} keys` };
    for (const key of keys) {
      if (RESERVED_KEYS.has(key)) return { message: `The key ${JSON.stringify(key)} in ${at(visit)} is not accepted` };
      const problem = stringProblem(key);
      if (problem !== null) return { message: `The key ${JSON.stringify(key)} in ${at(visit)} ${problem}` };
    }
    const record = value as Record<string, unknown>;
    for (let index = keys.length - 1; index >= 0; index--)
      pending.push({ value: record[keys[index]], depth, parent: visit, key: keys[index] });
  }
  return null;
}

/**
 * The parsed bodies that passed jsonBodyProblem, by identity. The validation pipe skips, for
 * these, the walks Nest's ValidationPipe makes to defend against values JSON cannot hold (see
 * src/common/pipes/validation.pipe.ts).
 */
const checkedBodies = new WeakSet<object>();

/** Records that `body` (as parsed, not a copy) passed jsonBodyProblem. */
export function markCheckedJsonBody(body: unknown): void {
  if (typeof body === 'object' && body !== null) checkedBodies.add(body);
}

/** `value` is a parsed body that passed jsonBodyProblem. */
export const isCheckedJsonBody = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && checkedBodies.has(value);
