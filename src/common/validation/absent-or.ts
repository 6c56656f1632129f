import { ValidateIf } from 'class-validator';

/**
 * A field that may be left out but not sent as null: its checks run for every value but
 * `undefined`. class-validator's IsOptional skips them for null too, so on a PATCH
 * `{"name": null}` passed validation and reached the service as a change to null (a 500 on the
 * column's NOT NULL, or a TypeError on a list). Use IsOptional only where null means something
 * (the default, or "none"), and say what.
 */
export const AbsentOr = (): PropertyDecorator => ValidateIf((_object: object, value: unknown) => value !== undefined);
