import { Injectable, PipeTransform } from '@nestjs/common';
import { BadRequestError } from '../errors/app-error';
import { INT4_MAX, INT8_MAX, strictBigInteger, strictInteger } from '../validation/strict-integer';

/** A positive integer path id that fits its column: `int` (serverID) or `bigint` (uid, kept as a string). */
@Injectable()
export class ParseIntIdPipe implements PipeTransform<string, number> {
  constructor(private readonly name: string) {}

  transform(value: string): number {
    const id = strictInteger(value, 1, INT4_MAX, 10);
    if (id === null) throw BadRequestError.field(this.name, 'must be a positive integer');
    return id;
  }
}

@Injectable()
export class ParseBigIdPipe implements PipeTransform<string, string> {
  constructor(private readonly name: string) {}

  transform(value: string): string {
    const id = strictBigInteger(value, 1n, INT8_MAX);
    if (id === null) throw BadRequestError.field(this.name, 'must be a positive integer');
    return id.toString();
  }
}
