/**
 * CLI output and exit codes: human-readable text by default, one JSON document with
 * `-o json`, JSON lines with `-o jsonl` (one compact object per line: a command that follows a
 * run streams one per update, the others print their one document on one line). Exit codes: 0 ok, 1 failed (including a run that failed), 2 bad input
 * (usage, spec, unknown run, a destructive command unconfirmed without a terminal), 130 interrupted
 * or declined at a confirmation.
 */
import { UsageError } from '../domain/usage-error';
import { Declined } from './confirm';
import { SpecError } from '../specs/errors';
import { temporalErrorMessage } from '../temporal/errors';

export { UsageError };

export const ExitCode = { Ok: 0, Failed: 1, Usage: 2, Interrupted: 130 } as const;

export type OutputFormat = 'text' | 'json' | 'jsonl';

export interface OutputOptions {
  output?: string;
}

export function format(options: OutputOptions): OutputFormat {
  if (options.output === undefined || options.output === 'text') return 'text';
  if (options.output === 'json' || options.output === 'jsonl') return options.output;
  throw new UsageError(`-o/--output must be text, json or jsonl (got "${options.output}")`);
}

export function emit<T>(options: OutputOptions, value: T, text: (value: T) => string): void {
  const as = format(options);
  if (as === 'json') process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  else if (as === 'jsonl') process.stdout.write(`${JSON.stringify(value)}\n`);
  else process.stdout.write(`${text(value)}\n`);
}

export function exitCodeFor(err: unknown): number {
  if (err instanceof Declined) return ExitCode.Interrupted;
  return err instanceof UsageError || err instanceof SpecError ? ExitCode.Usage : ExitCode.Failed;
}

export function reportError(err: unknown, options: OutputOptions = {}): number {
  const code = exitCodeFor(err);
  const message = temporalErrorMessage(err) ?? (err instanceof Error ? err.message : String(err));
  if (options.output === 'json' || options.output === 'jsonl') process.stdout.write(`${JSON.stringify({ error: message, exitCode: code })}\n`);
  process.stderr.write(`backfill: ${message}\n`);
  return code;
}
