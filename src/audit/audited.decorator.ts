import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { AuditInterceptor } from './audit.interceptor';
import { AUDITED_KEY, AuditInput, AuditSpec } from './audit-spec';
import { isJsonObject } from '../common/validation/json-object';
import { INT8_MAX, strictBigInteger } from '../common/validation/strict-integer';

export { AUDITED_KEY } from './audit-spec';
export type { AuditInput, AuditSpec } from './audit-spec';

/** The body when it is a JSON object, else nothing: the default summary (admin bodies hold no secret). */
export const bodySummary = ({ body }: AuditInput): Record<string, unknown> => (isJsonObject(body) ? body : {});

/** A path id as the handler's pipe read it: `0042` → `42`. */
export const pathId = (input: AuditInput, name: string): string =>
  strictBigInteger(input.params[name], 0n, INT8_MAX)?.toString() ?? String(input.params[name]);

/**
 * Marks an admin write: after the handler succeeds, AuditInterceptor appends one admin_audit row
 * with `action`, the target `target(input)` names and `summary(input)` (default: the JSON body).
 * Every non-GET route under @AdminAuth() must carry it (test/e2e/admin-audit.e2e-spec.ts).
 *
 * The interceptor is bound here, to the audited route only, not globally: a route without any
 * interceptor skips Nest's interceptor chain (an rxjs Observable and an async-context binding per
 * request), about 4 % of the service's profile of score uploads (docs/benchmarks-archive.md "Without a global
 * interceptor").
 */
export const Audited = (action: string, target: AuditSpec['target'], summary: AuditSpec['summary'] = bodySummary) =>
  applyDecorators(
    SetMetadata(AUDITED_KEY, { action, target, summary } satisfies AuditSpec),
    UseInterceptors(AuditInterceptor),
  );
