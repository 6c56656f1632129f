/** What @Audited records on a route, read by AuditInterceptor. */
export const AUDITED_KEY = 'rhythmc:audited';

/** What an audited handler saw and answered, for its target and summary functions. */
export interface AuditInput {
  /** Path parameters as sent (the handler's pipes accepted them). */
  params: Record<string, string>;
  /** The parsed JSON body (the handler's validation accepted it); undefined without one. */
  body: unknown;
  /** The handler's answer: may hold a token, so a summary picks fields from it, never copies it. */
  result: unknown;
  /** The staff account that made the call; null for ADMIN_TOKEN. */
  accountId: number | null;
}

export interface AuditSpec {
  action: string;
  target: (input: AuditInput) => string;
  summary: (input: AuditInput) => Record<string, unknown>;
}
