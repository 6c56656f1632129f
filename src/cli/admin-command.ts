/** What every admin CLI command is made of (src/cli/admin.ts runs them; admin-reads.ts holds the reads). */
export type OptionSpec =
  | { type: 'string'; multiple?: boolean; value: string; help: string; required?: boolean }
  | { type: 'boolean'; help: string };

export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** JSON text of the body. */
  body?: string;
}

export interface Parsed {
  positionals: string[];
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
}

export interface Command {
  /** `<group> <action>` */
  name: string;
  /** Positional arguments, in order. */
  args: string[];
  options: Record<string, OptionSpec>;
  summary: string;
  /** Longer help: what it calls and what it answers. */
  details: string;
  build(parsed: Parsed): Call;
  /** Reads only: the answer as readable text (the default); `--json` prints the JSON instead. */
  render?(body: unknown): string;
}

/** A mistake in the command line: usage text, exit 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command: Command | null = null,
    /** Shown instead of the command's (or the general) usage. */
    readonly usage: string | null = null,
  ) {
    super(message);
  }
}

export const segment = (value: string) => encodeURIComponent(value);

export function text(values: Parsed['values'], name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}
