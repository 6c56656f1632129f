/** One entry of a 400's `errors` (src/common/errors/field-problem.ts). */
export interface Problem {
  index?: number;
  field: string;
  message: string;
}

/** The whole body of a 400: §2's `error` and `message`, and the problems by field. */
export const badRequest = (message: string, errors: Problem[] = []) => ({ error: 'BAD_REQUEST', message, errors });

/** The 400 of one field: `message` reads `<field> <problem>` (`label`: `<field>: <problem>`). */
export const badField = (field: string, problem: string, style: 'sentence' | 'label' = 'sentence') =>
  badRequest(style === 'label' ? `${field}: ${problem}` : `${field} ${problem}`, [{ field, message: problem }]);

/**
 * The 400 whose message is these lines joined by `; `, each naming a field or a list element, in the
 * wordings the service writes: `<field> <problem>`, `<field>: <problem>`, under `[i].` (batch
 * bodies, path wording) or `[i] ` (`[i] <field>: <problem>`, the label wording; `[i] entry:` and
 * `[i] <problem>` are the element itself). `x: property x should not exist` is the unknown field x.
 * For tables of refusals; a message about the request as a whole is badRequest(message).
 */
export function badLines(...lines: string[]) {
  const errors = lines.map((line): Problem => {
    const field =
      /^(?:\[(\d+)\]\.)?([a-z_][\w.]*)(: | )(.*)$/s.exec(line) ?? /^\[(\d+)\] ([a-z_][\w.]*)(: )(.*)$/s.exec(line);
    const element = /^\[(\d+)\] (.*)$/s.exec(line);
    if (!field && !element) throw new Error(`not a field line: ${line}`);
    const [, index, name, joint, problem] = field ?? [element![0], element![1], '', ' ', element![2]];
    const unknown = joint === ': ' && problem === `property ${name.split('.').pop()} should not exist`;
    return {
      ...(index === undefined ? {} : { index: Number(index) }),
      field: name === 'entry' && index !== undefined ? '' : name,
      message: unknown ? 'unknown field' : problem,
    };
  });
  return badRequest(lines.join('; '), errors);
}
