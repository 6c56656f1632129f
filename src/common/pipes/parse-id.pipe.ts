import { Injectable, PipeTransform } from '@nestjs/common';
import { BadRequestError } from '../errors/app-error';

const MAX_BIGINT = 9_223_372_036_854_775_807n;

/** A positive integer path id that fits its column: `int` (serverID) or `bigint` (uid, kept as a string). */
@Injectable()
export class ParseIntIdPipe implements PipeTransform<string, number> {
  constructor(private readonly name: string) {}

  transform(value: string): number {
    if (!/^\d{1,10}$/.test(value) || Number(value) < 1 || Number(value) > 2_147_483_647) {
      throw new BadRequestError(`${this.name} must be a positive integer`);
    }
    return Number(value);
  }
}

@Injectable()
export class ParseBigIdPipe implements PipeTransform<string, string> {
  constructor(private readonly name: string) {}

  transform(value: string): string {
    if (!/^\d{1,19}$/.test(value) || BigInt(value) < 1n || BigInt(value) > MAX_BIGINT) {
      throw new BadRequestError(`${this.name} must be a positive integer`);
    }
    return BigInt(value).toString();
  }
}
