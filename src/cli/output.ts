/**
 * CLI output and exit codes: human-readable text by default, one JSON document with
 * `-o json`. Exit codes: 0 ok, 1 failed (including a run that failed), 2 bad input
 * (usage, spec, unknown run), 130 interrupted.
 */
import { UsageError } from '../operations/errors';
import { SpecError } from '../specs/errors';

export { UsageError };

export const ExitCode = { Ok: 0, Failed: 1, Usage: 2, Interrupted: 130 } as const;

export type OutputFormat = 'text' | 'json';

export interface OutputOptions {
  output?: string;
}

export function format(options: OutputOptions): OutputFormat {
  if (options.output === undefined || options.output === 'text') return 'text';
  if (options.output === 'json') return 'json';
  throw new UsageError(`-o/--output must be text or json (got "${options.output}")`);
}

export function emit<T>(options: OutputOptions, value: T, text: (value: T) => string): void {
  if (format(options) === 'json') process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  else process.stdout.write(`${text(value)}\n`);
}

export function exitCodeFor(err: unknown): number {
  return err instanceof UsageError || err instanceof SpecError ? ExitCode.Usage : ExitCode.Failed;
}

export function reportError(err: unknown, options: OutputOptions = {}): number {
  const code = exitCodeFor(err);
  const message = err instanceof Error ? err.message : String(err);
  if (options.output === 'json') process.stdout.write(`${JSON.stringify({ error: message, exitCode: code })}\n`);
  process.stderr.write(`backfill: ${message}\n`);
  return code;
}
