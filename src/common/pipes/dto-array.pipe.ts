import { PipeTransform, Type } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validate, ValidationError } from 'class-validator';
import { BadRequestError } from '../errors/app-error';
import { FieldProblem } from '../errors/field-problem';
import { validationProblems } from '../validation/describe-errors';
import { droppedFields, unknownFieldErrors } from '../validation/dropped-fields';
import { isJsonObject } from '../validation/json-object';

/** Problems spelled out in one answer; the rest are counted. */
const MAX_LISTED = 20;

export interface DtoArrayOptions<T> {
  maxItems: number;
  /**
   * How a problem names its element and field:
   * - `path` (default): `[3].levelId must be …`, class-validator's messages under a `[3]` parent;
   * - `label`: `[3] levelId: must be …` (the catalog batches); an unknown field reads `[3] icon:
   *   unknown field`, a non-object `[3] entry: must be a JSON object`, and a message that starts
   *   with `field.` names a part of the field (`[3] properties.title: must be a string`).
   * Either way the body's `errors` lists `{index: 3, field: 'levelId', message: 'must be …'}`.
   */
  wording?: 'path' | 'label';
  /**
   * A field no two elements may share: an element whose value of it is valid and already taken is
   * refused as a duplicate of the first one (`[4] key: duplicate of entry [0]`).
   */
  unique?: keyof T & string;
}

/**
 * A JSON array body whose every element is validated as `dto` with the global pipe's rules
 * (whitelist, unknown fields forbidden). The global ValidationPipe skips arrays. The whole batch
 * is checked before anything is used; the answer names every bad element by index. Every batch
 * body of the API goes through this pipe.
 */
export class DtoArrayPipe<T extends object> implements PipeTransform<unknown, Promise<T[]>> {
  private readonly wording: 'path' | 'label';
  /** The DTO's validated fields in declaration order (where a duplicate's problem is listed). */
  private readonly fieldOrder: string[];

  constructor(
    private readonly dto: Type<T>,
    private readonly options: DtoArrayOptions<T>,
  ) {
    this.wording = options.wording ?? 'path';
    const metadata = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
    this.fieldOrder = [...new Set(metadata.map((entry) => entry.propertyName))];
  }

  async transform(value: unknown): Promise<T[]> {
    const { maxItems, unique } = this.options;
    if (!Array.isArray(value)) throw new BadRequestError('The request body must be a JSON array');
    if (value.length > maxItems)
      throw new BadRequestError(`At most ${maxItems} entries per request, got ${value.length}`);
    const problems: Array<FieldProblem & { line: string }> = [];
    const items: T[] = [];
    const seen = new Map<unknown, number>();
    for (const [index, element] of (value as unknown[]).entries()) {
      if (!isJsonObject(element)) {
        const line =
          this.wording === 'label' ? `[${index}] entry: must be a JSON object` : `[${index}] must be a JSON object`;
        problems.push({ index, field: '', message: 'must be a JSON object', line });
        continue;
      }
      const item = plainToInstance(this.dto, element);
      // Keys class-transformer did not copy (`valueOf`…) are unknown fields the whitelist cannot see.
      const errors = [
        ...unknownFieldErrors(droppedFields(element, item)),
        ...(await validate(item, {
          whitelist: true,
          forbidNonWhitelisted: true,
          forbidUnknownValues: true,
          validationError: { target: false, value: false },
        })),
      ];
      if (unique && !errors.some((error) => error.property === unique)) {
        const key: unknown = item[unique];
        const first = seen.get(key);
        if (first === undefined) seen.set(key, index);
        else
          this.insertInFieldOrder(errors, {
            property: unique,
            children: [],
            constraints: { unique: this.duplicateMessage(unique, first) },
          });
      }
      problems.push(
        ...validationProblems(errors).map((problem) => ({
          ...problem,
          index,
          line: this.wording === 'label' ? labelled(problem, index) : `[${index}].${problem.line}`,
        })),
      );
      items.push(item);
    }
    const messages = problems.map((problem) => problem.line);
    if (messages.length > MAX_LISTED) {
      throw new BadRequestError(
        `${messages.slice(0, MAX_LISTED).join('; ')}; … and ${messages.length - MAX_LISTED} more`,
        problems,
      );
    }
    if (messages.length > 0) throw new BadRequestError(messages.join('; '), problems);
    return items;
  }

  private duplicateMessage(field: string, first: number): string {
    return this.wording === 'label' ? `duplicate of entry [${first}]` : `${field} duplicates entry [${first}]`;
  }

  /** Unknown-field problems come first (as class-validator lists them), then the fields in declaration order. */
  private insertInFieldOrder(errors: ValidationError[], added: ValidationError): void {
    const rank = (error: ValidationError) =>
      error.constraints?.whitelistValidation ? -1 : this.fieldOrder.indexOf(error.property);
    const at = errors.findIndex((error) => rank(error) > rank(added));
    errors.splice(at === -1 ? errors.length : at, 0, added);
  }
}

/** `[index] field: problem`, the `label` wording of a problem (an unknown field reads `unknown field`). */
function labelled(problem: FieldProblem, index: number): string {
  return `[${index}] ${problem.field}: ${problem.message}`;
}
