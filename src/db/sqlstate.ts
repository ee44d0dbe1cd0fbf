/**
 * The SQLSTATEs the engine acts on by name (PostgreSQL's Appendix A), so a branch on an error
 * reads as what happened. Classes that are handled whole (data errors, a lost connection) are
 * classified in db/errors.ts.
 */
import { isPgError } from './errors';

export const SqlState = {
  /** lock_timeout ran out: a lock the statement waited for was held too long. */
  LockNotAvailable: '55P03',
  /** The server cannot extend a file: its disk is full. */
  DiskFull: '53100',
  /** REPEATABLE READ found a row changed after the snapshot. */
  SerializationFailure: '40001',
  DeadlockDetected: '40P01',
  /** statement_timeout ran out, or an operator's pg_cancel_backend. */
  QueryCanceled: '57014',
  /** idle_in_transaction_session_timeout ran out (a TypeScript transform held the chunk open). */
  IdleInTransactionTimeout: '25P03',
  InsufficientPrivilege: '42501',
  UndefinedTable: '42P01',
  UndefinedColumn: '42703',
} as const;
export type SqlState = (typeof SqlState)[keyof typeof SqlState];

export function hasSqlState(err: unknown, ...states: SqlState[]): boolean {
  return isPgError(err) && (states as string[]).includes(err.code!);
}
