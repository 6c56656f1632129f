import { SetMetadata } from '@nestjs/common';
import { isJsonObject } from '../common/validation/json-object';

export const AUDITED_KEY = 'rhythmc:audited';

/** What an audited handler saw and answered, for its target and summary functions. */
export interface AuditInput {
  /** Path parameters as sent (the handler's pipes accepted them). */
  params: Record<string, string>;
  /** The parsed JSON body (the handler's validation accepted it); undefined without one. */
  body: unknown;
  /** The handler's answer: may hold a token, so a summary picks fields from it, never copies it. */
  result: unknown;
}

export interface AuditSpec {
  action: string;
  target: (input: AuditInput) => string;
  summary: (input: AuditInput) => Record<string, unknown>;
}

/** The body when it is a JSON object, else nothing: the default summary (admin bodies hold no secret). */
export const bodySummary = ({ body }: AuditInput): Record<string, unknown> => (isJsonObject(body) ? body : {});

/** A path id as the handler's pipe read it: `0042` → `42`. */
export const pathId = (input: AuditInput, name: string): string =>
  /^\d+$/.test(input.params[name] ?? '') ? BigInt(input.params[name]).toString() : String(input.params[name]);

/**
 * Marks an admin write: after the handler succeeds, AuditInterceptor appends one admin_audit row
 * with `action`, the target `target(input)` names and `summary(input)` (default: the JSON body).
 * Every non-GET route under @AdminAuth() must carry it (test/e2e/admin-audit.e2e-spec.ts).
 */
export const Audited = (action: string, target: AuditSpec['target'], summary: AuditSpec['summary'] = bodySummary) =>
  SetMetadata(AUDITED_KEY, { action, target, summary } satisfies AuditSpec);
