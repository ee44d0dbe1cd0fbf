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
  schema?: string;
  constraint?: string;
}

const PERMANENT_CLASSES = ['22', '23', '42', '2B', 'P0', '0A', '21', '44'];

export function isPgError(err: unknown): err is PgError {
  return err instanceof Error && typeof (err as PgError).code === 'string' && (err as PgError).code!.length === 5;
}

export function isDataError(err: unknown): boolean {
  return isPgError(err) && PERMANENT_CLASSES.includes(err.code!.slice(0, 2));
}

/**
 * A statement the database refuses the same way however often it is tried: the data and
 * definition classes, but a missing privilege (42501), which an operator can GRANT while a
 * retrying activity waits.
 */
export function failsEveryTime(err: unknown): boolean {
  return isDataError(err) && (err as PgError).code !== '42501';
}

export function describePgError(err: unknown): string {
  if (!isPgError(err)) return err instanceof Error ? err.message : String(err);
  const parts = [`${err.message} (SQLSTATE ${err.code})`];
  if (err.detail) parts.push(`detail: ${err.detail}`);
  if (err.hint) parts.push(`hint: ${err.hint}`);
  return parts.join('; ');
}

/**
 * Classes whose primary message PostgreSQL words from names alone (constraint, column,
 * relation, type), keeping row values for the DETAIL field: "duplicate key value violates
 * unique constraint …", "column … does not exist".
 */
const NAMES_ONLY_CLASSES = ['23', '42', '0A', '21', '2B', '44', '40', '55', '57', '08', '53'];

/**
 * The error as it may be shown outside the database — in Temporal histories, the Web UI,
 * logs: what kind of error, on which table, constraint and column, never a row value.
 * DETAIL ("Failing row contains (…)", "Key (email)=(…) already exists") is dropped; class 22
 * messages quote the offending value ('invalid input syntax for type integer: "abc"'), so
 * quoted text is elided; P0 (RAISE in user code) may say anything, so only its SQLSTATE is
 * kept. The full error belongs in the ledger (see describePgError).
 */
export function summarizePgError(err: unknown): string {
  if (!isPgError(err)) return 'an error that is not from PostgreSQL';
  const cls = err.code!.slice(0, 2);
  let text: string;
  if (NAMES_ONLY_CLASSES.includes(cls)) text = err.message;
  else if (cls === '22') text = elideQuoted(err.message);
  else text = 'an error raised by code in the database';
  const where = [
    err.table ? `table ${err.schema ? `${err.schema}.` : ''}${err.table}` : '',
    err.constraint && !text.includes(err.constraint) ? `constraint ${err.constraint}` : '',
    err.column && !text.includes(err.column) ? `column ${err.column}` : '',
  ].filter(Boolean);
  return `${text} (SQLSTATE ${err.code}${where.length ? `; ${where.join(', ')}` : ''})`;
}

function elideQuoted(message: string): string {
  return message.replace(/"(?:[^"]|"")*"/g, '"…"').replace(/'(?:[^']|'')*'/g, "'…'");
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * The database is away for a while — restarting (57P03 "starting up"), shut down (57P01/02),
 * the connection lost (class 08, a reset or refused socket), out of connection slots (53300) —
 * rather than refusing this statement: what a follower waits out instead of failing.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (isPgError(err)) return err.code!.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(err.code!);
  const e = err as NodeJS.ErrnoException;
  if (e?.code && CONNECTION_CODES.has(e.code)) return true;
  return e instanceof Error && /Connection terminated|connection timeout|Client has encountered a connection error/i.test(e.message);
}
