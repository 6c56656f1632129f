import { Injectable, PipeTransform } from '@nestjs/common';
import { LEVEL_ID_MAX } from '../../catalog/catalog.rules';
import { BadRequestError } from '../../common/errors/app-error';
import { strictInteger } from '../../common/validation/strict-integer';

/** A `{levelId}` path parameter: a decimal integer from 0 to 2^31 − 1 (the catalog's range), nothing else (`+1`, `1.0`, `0x1`). */
@Injectable()
export class ParseLevelIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    const levelId = strictInteger(value, 0, LEVEL_ID_MAX, 10);
    if (levelId === null) throw BadRequestError.field('levelId', `must be an integer from 0 to ${LEVEL_ID_MAX}`);
    return levelId;
  }
}
