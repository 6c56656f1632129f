import { PipeTransform, Type } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { BadRequestError } from '../../common/errors/app-error';
import { describeValidationErrors } from '../../common/validation/describe-errors';
import { isJsonObject } from '../../common/validation/json-object';

/** Problems spelled out in one answer; the rest are counted. */
const MAX_LISTED = 20;

/**
 * A JSON array body whose every element is validated as `dto` with the global pipe's rules
 * (whitelist, unknown fields forbidden). The global ValidationPipe skips arrays. The whole batch
 * is checked before anything is used; the answer names every bad element as `[index].field`.
 */
export class DtoArrayPipe<T extends object> implements PipeTransform<unknown, Promise<T[]>> {
  constructor(
    private readonly dto: Type<T>,
    private readonly maxItems: number,
  ) {}

  async transform(value: unknown): Promise<T[]> {
    if (!Array.isArray(value)) throw new BadRequestError('The request body must be a JSON array');
    if (value.length > this.maxItems) throw new BadRequestError(`At most ${this.maxItems} entries per request, got ${value.length}`);
    const messages: string[] = [];
    const items: T[] = [];
    for (const [index, element] of (value as unknown[]).entries()) {
      if (!isJsonObject(element)) {
        messages.push(`[${index}] must be a JSON object`);
        continue;
      }
      const item = plainToInstance(this.dto, element);
      const errors = await validate(item, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true, validationError: { target: false, value: false } });
      messages.push(...describeValidationErrors(errors, `[${index}]`));
      items.push(item);
    }
    if (messages.length > MAX_LISTED) {
      throw new BadRequestError(`${messages.slice(0, MAX_LISTED).join('; ')}; … and ${messages.length - MAX_LISTED} more`);
    }
    if (messages.length > 0) throw new BadRequestError(messages.join('; '));
    return items;
  }
}
