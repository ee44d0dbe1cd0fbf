/**
 * CLI output and exit codes: human-readable text by default, one JSON document with
 * `-o json`, JSON lines with `-o jsonl` (one compact object per line: a command that follows a
 * run streams one per update, the others print their one document on one line). Exit codes
 * (docs/operating.md "Exit codes"): 0 ok, 1 failed (a run that did not succeed, a mismatch), 2 bad input
 * (usage, spec, unknown run, a destructive command unconfirmed without a terminal), 3 could not
 * answer (Temporal or a database unreachable), 130 interrupted or declined at a confirmation.
 */
import { UsageError } from '../domain/usage-error';
import { Declined } from './confirm';
import { SpecError } from '../specs/errors';
import { grpcCause, temporalErrorMessage } from '../temporal/errors';
import { status } from '@grpc/grpc-js';
import { UnreachableError } from '../domain/unreachable-error';
import { isDatabaseUnavailable } from '../db/errors';

export { UsageError };

export const ExitCode = { Ok: 0, Failed: 1, Usage: 2, Unreachable: 3, Interrupted: 130 } as const;

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
  if (err instanceof UsageError || err instanceof SpecError) return ExitCode.Usage;
  return couldNotAnswer(err) ? ExitCode.Unreachable : ExitCode.Failed;
}

/** The error, or one it was caused by, is a server that did not answer: Temporal or a database away. */
function couldNotAnswer(err: unknown): boolean {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof UnreachableError || isDatabaseUnavailable(e)) return true;
    const grpc = grpcCause(e);
    if (grpc && (grpc.code === status.UNAVAILABLE || grpc.code === status.DEADLINE_EXCEEDED)) return true;
  }
  return false;
}

export function reportError(err: unknown, options: OutputOptions = {}): number {
  const code = exitCodeFor(err);
  const message = temporalErrorMessage(err) ?? (err instanceof Error ? err.message : String(err));
  if (options.output === 'json' || options.output === 'jsonl') process.stdout.write(`${JSON.stringify({ error: message, exitCode: code })}\n`);
  process.stderr.write(`backfill: ${message}\n`);
  return code;
}
