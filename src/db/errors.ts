/**
 * PostgreSQL errors classified by SQLSTATE. Data and definition errors (classes 22, 23,
 * 42, and 2B/P0 raised by user code) will fail the same way on every retry: the partition
 * fails at once with the error and chunk range recorded. Everything else (connection
 * loss 08, serialization failure 40001, deadlock 40P01, shutdown 57P) is retried.
 */

export interface PgError extends Error {
  code?: string;
  detail?: string;
  hint?: string;
  column?: string;
  table?: string;
}

const PERMANENT_CLASSES = ['22', '23', '42', '2B', 'P0', '0A', '21', '44'];

export function isPgError(err: unknown): err is PgError {
  return err instanceof Error && typeof (err as PgError).code === 'string' && (err as PgError).code!.length === 5;
}

export function isDataError(err: unknown): boolean {
  return isPgError(err) && PERMANENT_CLASSES.includes(err.code!.slice(0, 2));
}

export function describePgError(err: unknown): string {
  if (!isPgError(err)) return err instanceof Error ? err.message : String(err);
  const parts = [`${err.message} (SQLSTATE ${err.code})`];
  if (err.detail) parts.push(`detail: ${err.detail}`);
  if (err.hint) parts.push(`hint: ${err.hint}`);
  return parts.join('; ');
}
