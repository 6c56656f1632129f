import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { BadRequestError } from '../errors/app-error';
import { validationProblems } from '../validation/describe-errors';
import { droppedFields, unknownFieldErrors } from '../validation/dropped-fields';
import { isPluginBody } from '../validation/plugin-body';
import { isJsonObject } from '../validation/json-object';
import { isMemoizedQuery, QueryMemo } from '../validation/memoized-query';
import { cacheValidationMetadata } from '../validation/metadata-cache';
import { isCheckedJsonBody, RESERVED_KEYS } from '../http/json-body-check';

/** Told of the unknown fields a plugin body carried (they were ignored). */
export type IgnoredFieldsListener = (dto: string, fields: string[]) => void;

/**
 * Nest's ValidationPipe for a request body that passed jsonBodyProblem (isCheckedJsonBody). Before
 * validating, Nest's pipe walks every value three times to defend against what JSON.parse cannot
 * produce and what that check refuses: keys `__proto__`, `constructor` and `prototype`
 * (stripProtoKeys), sparse arrays (closeArrayGaps) and binary values in nested objects
 * (findNestedBinaryValues). For such a body each walk is a no-op; skipped, they were 2.6 % of the
 * service's profile of score uploads (docs/benchmarks-archive.md "Without a global interceptor"). Any
 * other value (a query
 * object, a WebSocket payload, a part of a body) goes through Nest's pipe as it is.
 * findNestedBinaryValues looks at the instance class-transformer built, not at the parsed body: it
 * stays a no-op only while no DTO's @Transform or @Type turns a JSON value into a Buffer or a typed
 * array (none does; a DTO that needs one must not be a checked body's).
 */
class CheckedJsonValidationPipe extends ValidationPipe {
  protected override stripProtoKeys(): void {}

  protected override closeArrayGaps(): void {}

  protected override findNestedBinaryValues(): ValidationError[] {
    return [];
  }
}

type PipeOptions = ConstructorParameters<typeof ValidationPipe>[0];

/** The pipes a DTO body goes through: Nest's for any value, and the twin for a checked JSON body. */
class BodyPipes {
  private readonly any: ValidationPipe;
  private readonly checkedJson: ValidationPipe;

  constructor(options: PipeOptions) {
    this.any = new ValidationPipe(options);
    this.checkedJson = new CheckedJsonValidationPipe(options);
  }

  transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    return (isCheckedJsonBody(value) ? this.checkedJson : this.any).transform(value, metadata) as Promise<unknown>;
  }
}

/**
 * A JSON array where a DTO object is expected gets one clear message instead of per-index noise.
 * Bodies marked @PluginBody() go through the liberal pipe (unknown fields stripped and reported),
 * every other one through the strict pipe (unknown fields are 400).
 */
class AppValidationPipe extends ValidationPipe {
  private readonly strict: BodyPipes;
  private readonly liberal: BodyPipes;
  private readonly queries = new QueryMemo();

  constructor(
    options: PipeOptions,
    private readonly onIgnored: IgnoredFieldsListener = () => undefined,
  ) {
    super({ ...options, forbidNonWhitelisted: true });
    this.strict = new BodyPipes({ ...options, forbidNonWhitelisted: true });
    this.liberal = new BodyPipes({ ...options, forbidNonWhitelisted: false });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (
      metadata.type === 'body' &&
      metadata.metatype &&
      metadata.metatype !== Array &&
      typeof metadata.metatype === 'function'
    ) {
      if (!isJsonObject(value)) {
        throw new BadRequestError('The request body must be a JSON object');
      }
      if (isPluginBody(metadata.metatype)) {
        const result = await this.liberal.transform(value, metadata);
        const ignored = droppedFields(value, result).map((path) => path.join('.'));
        if (ignored.length > 0) this.onIgnored(metadata.metatype.name, ignored);
        return result;
      }
      return this.refuseDropped(value, await this.strict.transform(value, metadata));
    }
    if (metadata.type === 'query') {
      // A hot read's query (@MemoizedQuery): a query string accepted before is not validated again.
      const key = isMemoizedQuery(metadata.metatype) ? QueryMemo.keyOf(value) : null;
      const kept = key === null ? undefined : this.queries.get(metadata.metatype, key);
      const validated = kept ?? (await this.validateQuery(value, metadata));
      if (key !== null && kept === undefined && typeof validated.instance === 'object' && validated.instance !== null)
        this.queries.set(metadata.metatype, key, validated.instance, validated.ignored);
      if (validated.ignored.length > 0) this.onIgnored((metadata.metatype as { name: string }).name, validated.ignored);
      return validated.instance;
    }
    return this.refuseDropped(value, await (super.transform(value, metadata) as Promise<unknown>));
  }

  /**
   * A query's DTO. A plugin route's query (@PluginBody() on its DTO: GET /server/baltop): an unknown
   * parameter, a cache-buster say, is ignored and reported like an unknown body field; the known ones
   * stay strict. Any other query: unknown parameters are 400.
   */
  private async validateQuery(
    value: unknown,
    metadata: ArgumentMetadata,
  ): Promise<{ instance: unknown; ignored: string[] }> {
    if (isPluginBody(metadata.metatype)) {
      const instance = await this.liberal.transform(value, metadata);
      return { instance, ignored: droppedFields(value, instance).map((path) => path.join('.')) };
    }
    // Nest's pipe deletes these keys before class-transformer sees them, so the unknown-field rule
    // never did: `?constructor=1` answered as the URL without it (a cache-buster past the 400).
    // Here, not before the memo: a query holding one is never kept, so it always comes this way.
    const reserved = isJsonObject(value) ? Object.keys(value).filter((key) => RESERVED_KEYS.has(key)) : [];
    if (reserved.length > 0) throw this.exceptionFactory(unknownFieldErrors(reserved.map((key) => [key])));
    return {
      instance: this.refuseDropped(value, await (super.transform(value, metadata) as Promise<unknown>)),
      ignored: [],
    };
  }

  /**
   * The whitelist refused every unknown field it saw; a key class-transformer never copied (one
   * named like a method of Object.prototype, `valueOf`) it did not see: refused here the same way.
   * Only DTO instances are looked at (droppedFields), so primitives and free-form values pass.
   */
  private refuseDropped(value: unknown, result: unknown): unknown {
    const dropped = droppedFields(value, result);
    if (dropped.length > 0) throw this.exceptionFactory(unknownFieldErrors(dropped));
    return result;
  }

  /**
   * Path and query values reach the route's own pipe as sent. Nest would turn `+1`, ` 1`, `1.0`,
   * `1e0` or `0x1` into the number 1 for a `number` parameter before that pipe (ParseIntIdPipe)
   * could refuse them, so `/admin/servers/0x1/bootstrap-token` rotated server 1's token.
   */
  protected override transformPrimitive(value: unknown): unknown {
    return value;
  }
}

const OPTIONS = {
  whitelist: true,
  transform: true,
  forbidUnknownValues: true,
  validationError: { target: false, value: false },
  // Two rules of one field can share a message (IsUid: "must be a positive integer"); say it once.
  exceptionFactory: (errors: ValidationError[]) => {
    const problems = validationProblems(errors);
    return new BadRequestError(
      [...new Set(problems.map((problem) => problem.line))].join('; ') || 'Invalid request body',
      problems,
    );
  },
};

/**
 * Whitelist, transform; a failure is 400 BAD_REQUEST naming every bad field. Unknown fields are
 * 400 too, except on plugin bodies (@PluginBody), where they are stripped and reported.
 */
export function createValidationPipe(onIgnored?: IgnoredFieldsListener): ValidationPipe {
  cacheValidationMetadata();
  return new AppValidationPipe(OPTIONS, onIgnored);
}
