import { Injectable, PipeTransform } from '@nestjs/common';
import { BadRequestError } from '../../common/errors/app-error';
import { resourcePathProblem } from '../resource-paths';

/** Most paths one POST /resources/down may ask for (the 256 KiB body limit allows about that many). */
export const MAX_PATHS_PER_REQUEST = 10_000;

/**
 * The body of POST /resources/down: a JSON array of relative paths. The global ValidationPipe
 * passes arrays through untouched, so the array is checked here; the first bad element is named.
 */
@Injectable()
export class ResourcePathsPipe implements PipeTransform<unknown, string[]> {
  transform(value: unknown): string[] {
    if (!Array.isArray(value)) throw new BadRequestError('The request body must be a JSON array of resource paths');
    if (value.length > MAX_PATHS_PER_REQUEST) {
      throw new BadRequestError(`At most ${MAX_PATHS_PER_REQUEST} paths per request, got ${value.length}`);
    }
    value.forEach((path: unknown, index) => {
      if (typeof path !== 'string')
        throw new BadRequestError(`[${index}] must be a string`, [{ index, field: '', message: 'must be a string' }]);
      const problem = resourcePathProblem(path);
      if (problem !== null) {
        const message = `${JSON.stringify(path)} ${problem}`;
        throw new BadRequestError(`[${index}] ${message}`, [{ index, field: '', message }]);
      }
    });
    return value as string[];
  }
}
