import { Injectable, PipeTransform } from '@nestjs/common';
import { BadRequestError } from '../../common/errors/app-error';

/** The longest pack name PUT /admin/packs accepts (PackDto.name). */
export const MAX_PACK_NAME_LENGTH = 128;

/**
 * The `{name}` of DELETE /admin/packs/{name}: a name PUT /admin/packs could have stored. A NUL
 * character would reach PostgreSQL, which refuses it in text (that was a 500).
 */
@Injectable()
export class PackNamePipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (value.length === 0 || value.length > MAX_PACK_NAME_LENGTH || value.includes('\u0000')) {
      throw BadRequestError.field('name', `must be 1 to ${MAX_PACK_NAME_LENGTH} characters without the NUL character`);
    }
    return value;
  }
}
