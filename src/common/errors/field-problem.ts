/**
 * One problem of a 400 answer, listed in its body's `errors` beside `message` (docs/decisions.md
 * "Errors"): `field` is the path of the field (`options.speed`, `player.playerUID`, `groups.1.name`;
 * `''` for an element or body as a whole), `index` the element's position when the request is a list
 * (a batch body, a list of paths), `message` what is wrong with it, without the field's name
 * (`must be an integer from 1 to 100`).
 */
export interface FieldProblem {
  index?: number;
  field: string;
  message: string;
}

/** Problems listed in one body; `message` still says everything (or how many more there are). */
export const MAX_FIELD_PROBLEMS = 20;
/** A field is named with at most this many characters (an unknown field is named as the caller sent it). */
export const MAX_FIELD_LENGTH = 64;
/** A problem's message is cut at this many characters (some quote what the caller sent). */
export const MAX_PROBLEM_MESSAGE_LENGTH = 500;

/** Cut at `max` code points, so a cut never splits a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join('');
}

/**
 * The `errors` of a body: at most MAX_FIELD_PROBLEMS, each field at most MAX_FIELD_LENGTH
 * characters, the same problem listed once. The JSON encoder escapes whatever a key holds.
 */
export function boundedProblems(problems: readonly FieldProblem[]): FieldProblem[] {
  const seen = new Set<string>();
  const bounded: FieldProblem[] = [];
  for (const problem of problems) {
    const entry: FieldProblem = {
      ...(problem.index !== undefined ? { index: problem.index } : {}),
      field: cut(problem.field, MAX_FIELD_LENGTH),
      message: cut(problem.message, MAX_PROBLEM_MESSAGE_LENGTH),
    };
    const key = JSON.stringify([entry.index, entry.field, entry.message]);
    if (seen.has(key)) continue;
    seen.add(key);
    bounded.push(entry);
    if (bounded.length === MAX_FIELD_PROBLEMS) break;
  }
  return bounded;
}
